// Global positions (ForwardOptions::q_offset, kv_offset: a shard of a longer sequence, as context
// parallelism runs it): cpu kernels give the mods global q_idx and kv_idx, forward and backward
// against the float64 oracles (tests/api/merge_test.cpp merges kv shards called with offsets); the
// offsets' checks, on cpu and CUDA kernels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/program_impl.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/api/backward_case.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

TEST(Positions, ForwardAndBackwardSeeGlobalIndices) {
  // A window and ALiBi slopes whose gradient is asked for: both read q_idx - kv_idx.
  BackwardCase c("alibi softcap window at 300/280", example("alibi_softcap_window"),
                 {.B = 1, .Hq = 4, .Hkv = 2, .Tq = 21, .Tkv = 33, .D = 16, .q_offset = 300, .kv_offset = 280});
  c.bind_scalar("window", 24);
  c.bind_floats("alibi_slopes", {4}, {0.5f, 0.25f, 0.125f, 0.0625f}, true);
  c.run();
  const ReferenceGradients ref = expect_matches_reference(c);
  // Not the answer at offset 0: with the window at 24 and the keys 20 behind, offset 0 would make
  // most pairs future keys (masked by the window's causal half).
  BackwardCase at_zero("alibi softcap window at 300/280", example("alibi_softcap_window"),
                       {.B = 1, .Hq = 4, .Hkv = 2, .Tq = 21, .Tkv = 33, .D = 16});
  at_zero.bind_scalar("window", 24);
  at_zero.bind_floats("alibi_slopes", {4}, {0.5f, 0.25f, 0.125f, 0.0625f}, true);
  at_zero.run();
  EXPECT_GT(relative_l2(at_zero.out, std::vector<double>(c.out.begin(), c.out.end())), 0.1);
}

std::string forward_error(std::int64_t q_offset, std::int64_t kv_offset, Device device = Device::cpu()) {
  std::vector<float> x(1 * 2 * 8 * 16);
  const Kernel k = engine().compile(example("causal"), {.head_dim = 16, .dtype = f32, .device = Device::cpu()});
  ForwardOptions o;
  o.q_offset = q_offset, o.kv_offset = kv_offset;
  const TensorView t = TensorView::contiguous(x.data(), f32, {1, 2, 8, 16}, device);
  return error_of([&] { k.forward(t, t, t, t, o); });
}

TEST(Positions, OffsetsAreChecked) {
  EXPECT_THAT(forward_error(-1, 0), HasSubstr("q_offset is -1: positions start at 0 or later"));
  EXPECT_THAT(forward_error(0, 2147483641),
              HasSubstr("kv_offset + Tkv = 2147483649 passes the last int32 position 2^31 - 1"));
  EXPECT_EQ(forward_error(2147483639, 0), "");  // the last row at 2^31 - 2
}

// CUDA kernels take the offsets (their runs: tests/gpu); planning checks them the same way, before
// anything is launched.
TEST(Positions, CudaKernelsCheckThemWhenPlanning) {
  const Kernel k = engine().compile(example("causal"), {.head_dim = 64, .dtype = bf16, .arch = "sm_90a"});
  Args a = good_args();
  auto error = [&](std::int64_t q_offset, std::int64_t kv_offset) {
    ForwardOptions o{.lse = a.lse};
    o.q_offset = q_offset, o.kv_offset = kv_offset;
    return error_of([&] { k.forward(a.q, a.k, a.v, a.out, o); });
  };
  EXPECT_THAT(error(0, -1), HasSubstr("kv_offset is -1: positions start at 0 or later"));
  EXPECT_THAT(error(2147483600, 0), HasSubstr("q_offset + Tq = 2147483728 passes the last int32 position 2^31 - 1"));
  // A good offset passes the checks: without a driver the call then fails at the launch.
  EXPECT_THAT(error(0, 4096), ::testing::Not(HasSubstr("offset")));
}

}  // namespace
}  // namespace flexjit::test

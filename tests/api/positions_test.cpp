// Global positions (ForwardOptions::q_offset, kv_offset: a shard of a longer sequence, as context
// parallelism runs it): cpu kernels give the mods global q_idx and kv_idx, forward and backward
// against the float64 oracles; shards of the keys merged by their log-sum-exp give the whole
// sequence's attention; the offsets' checks; CUDA kernels refuse them by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
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

// Two kv shards of a causal ALiBi sequence, each a call with its own kv_offset, merged by their
// lse, are the whole sequence's rows; a shard wholly in the future of its queries gives out = 0
// and lse = -inf.
TEST(Positions, KvShardsMergeToTheWholeSequence) {
  constexpr int H = 2, T = 40, D = 8, kSplit = 17, kQ0 = 20;  // queries [20, 40) of the sequence
  const Program program = example("alibi");
  const Kernel kernel = engine().compile(program, {.head_dim = D, .dtype = f32, .device = Device::cpu()});
  std::mt19937 rng(40);
  std::normal_distribution<float> normal;
  std::vector<float> q(H * T * D), k(H * T * D), v(H * T * D);
  for (auto* x : {&q, &k, &v})
    for (float& e : *x) e = normal(rng);
  // [H, T, D] rows [lo, hi) of x as a contiguous [1, H, hi - lo, D] copy.
  auto rows = [&](const std::vector<float>& x, int lo, int hi) {
    std::vector<float> y;
    for (int h = 0; h < H; ++h) y.insert(y.end(), x.begin() + (h * T + lo) * D, x.begin() + (h * T + hi) * D);
    return y;
  };
  auto view = [](std::vector<float>& x, int t) { return TensorView::contiguous(x.data(), f32, {1, H, t, D}, Device::cpu()); };
  struct Part {
    std::vector<float> out, lse;
  };
  auto run = [&](int q0, int q1, int k0, int k1) {
    std::vector<float> qs = rows(q, q0, q1), ks = rows(k, k0, k1), vs = rows(v, k0, k1);
    Part p{std::vector<float>(qs.size()), std::vector<float>(H * (q1 - q0))};
    ForwardOptions o{.lse = TensorView::contiguous(p.lse.data(), f32, {1, H, q1 - q0}, Device::cpu())};
    o.q_offset = q0, o.kv_offset = k0;
    kernel.forward(view(qs, q1 - q0), view(ks, k1 - k0), view(vs, k1 - k0), view(p.out, q1 - q0), o);
    return p;
  };
  const Part whole = run(kQ0, T, 0, T), left = run(kQ0, T, 0, kSplit), right = run(kQ0, T, kSplit, T);
  std::vector<float> merged(whole.out.size());
  for (int r = 0; r < H * (T - kQ0); ++r) {
    const double m = std::max(left.lse[r], right.lse[r]);
    const double wl = std::exp(left.lse[r] - m), wr = std::exp(right.lse[r] - m);
    for (int d = 0; d < D; ++d)
      merged[r * D + d] = static_cast<float>((wl * left.out[r * D + d] + wr * right.out[r * D + d]) / (wl + wr));
    EXPECT_NEAR(m + std::log(wl + wr), whole.lse[r], 1e-5) << r;
  }
  EXPECT_LT(relative_l2(merged, std::vector<double>(whole.out.begin(), whole.out.end())), 1e-6);

  const Part future = run(0, 10, kSplit, T);  // keys 17.. are after queries 0..9
  for (float x : future.out) EXPECT_EQ(x, 0.f);
  for (float l : future.lse) EXPECT_EQ(l, -INFINITY);
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

TEST(Positions, CudaKernelsRefuseThem) {
  const Kernel k = engine().compile(example("causal"), {.head_dim = 64, .dtype = bf16, .arch = "sm_90a"});
  Args a = good_args();
  ForwardOptions o{.lse = a.lse};
  o.kv_offset = 4096;
  EXPECT_THAT(error_of([&] { k.forward(a.q, a.k, a.v, a.out, o); }),
              HasSubstr("q_offset 0 and kv_offset 4096: CUDA kernels take no position offsets yet (cpu kernels do: "
                        "Device::cpu())"));
}

}  // namespace
}  // namespace flexjit::test

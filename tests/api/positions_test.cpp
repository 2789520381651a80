// Global positions (ForwardOptions::q_offset, kv_offset: a shard of a longer sequence, as context
// parallelism runs it): cpu kernels give the mods global q_idx and kv_idx, forward and backward
// against the float64 oracles (tests/api/merge_test.cpp merges kv shards called with offsets); the
// offsets' checks, on cpu and CUDA kernels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

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

// Kernel::may_keep_any: false only where the call keeps nothing. Checked against cpu calls over
// boxes of positions around the diagonal for masks in closed form (and one that reads a tensor,
// which the analysis cannot rule out); and the pairs it proves empty are not rare.
TEST(Positions, MayKeepAnyIsSound) {
  struct Mask {
    const char* example;
    std::map<std::string, Binding> bind;
  };
  std::vector<std::int32_t> doc(400, 0);
  for (std::size_t i = 0; i < doc.size(); ++i) doc[i] = static_cast<std::int32_t>(i / 50);
  const Mask masks[] = {{"causal", {}},
                        {"sliding_window", {{"window", 24}}},
                        {"two_sided_window", {{"window", 10}}},
                        {"chunked", {}},
                        {"prefix_lm", {{"prefix_len", TensorView::contiguous(doc.data(), i32, {1}, Device::cpu())}}},
                        {"neighbourhood_2d", {}},
                        {"dilated_window", {}}};
  int proved_empty = 0;
  for (const Mask& m : masks) {
    const Kernel k = engine().compile(example(m.example), {.head_dim = 16, .dtype = f32, .device = Device::cpu()});
    for (const std::int64_t q_offset : {0, 40, 130})
      for (const std::int64_t kv_offset : {0, 30, 100, 200}) {
        ForwardOptions o{.bind = m.bind};
        o.q_offset = q_offset, o.kv_offset = kv_offset;
        const int Tq = 20, Tkv = 30;
        if (k.may_keep_any(Tq, Tkv, o)) continue;
        ++proved_empty;
        std::vector<float> x(static_cast<std::size_t>(2 * Tkv * 16), 0.5f), out(2 * Tq * 16), lse(2 * Tq);
        o.lse = TensorView::contiguous(lse.data(), f32, {1, 2, Tq}, Device::cpu());
        const TensorView q = TensorView::contiguous(x.data(), f32, {1, 2, Tq, 16}, Device::cpu());
        const TensorView kv = TensorView::contiguous(x.data(), f32, {1, 2, Tkv, 16}, Device::cpu());
        k.forward(q, kv, kv, TensorView::contiguous(out.data(), f32, {1, 2, Tq, 16}, Device::cpu()), o);
        for (float l : lse) EXPECT_TRUE(std::isinf(l) && l < 0) << m.example << " at " << q_offset << "/" << kv_offset;
      }
  }
  EXPECT_GE(proved_empty, 15);
  // A mask that reads a tensor: the analysis reads no tensor, so the documents (of 50 positions:
  // queries 300.. and keys 0.. share none) prove nothing; its causal half does.
  const Kernel doc_kernel = engine().compile(example("document"), {.head_dim = 16, .dtype = f32, .device = Device::cpu()});
  ForwardOptions o{.bind = {{"doc_ids", TensorView::contiguous(doc.data(), i32, {400}, Device::cpu())}}};
  o.q_offset = 300, o.kv_offset = 0;
  EXPECT_TRUE(doc_kernel.may_keep_any(20, 30, o));
  o.q_offset = 0, o.kv_offset = 300;
  EXPECT_FALSE(doc_kernel.may_keep_any(20, 30, o));
}

TEST(Positions, MayKeepAnyChecksItsArguments) {
  const Kernel k = engine().compile(example("sliding_window"), {.head_dim = 16, .dtype = f32, .device = Device::cpu()});
  ForwardOptions o;
  o.q_offset = -2;
  const std::string e = error_of([&] { k.may_keep_any(0, 8, o); });
  EXPECT_THAT(e, HasSubstr("Tq must be >= 1, got 0"));
  EXPECT_THAT(e, HasSubstr("q_offset is -2: positions start at 0 or later"));
  EXPECT_THAT(e, HasSubstr("'window' is not bound"));
}

// Kernel::kept_pairs (what flexjit.ring.balanced_chunks deals): exact under the budget, a sample
// over it, summed over batch entries and heads, and its arguments checked.
TEST(Positions, KeptPairsCountWhatTheMaskKeeps) {
  const Kernel causal = engine().compile(example("causal"), {.head_dim = 16, .dtype = f32, .device = Device::cpu()});
  // Chunks [0, 3), [3, 10): 6 pairs in the first diagonal block, 21 below it, 28 in the second.
  EXPECT_EQ(causal.kept_pairs({0, 3, 10}, 1, 1), (std::vector<double>{6, 0, 21, 28}));
  EXPECT_EQ(causal.kept_pairs({0, 3, 10}, 2, 3), (std::vector<double>{36, 0, 126, 168}));
  // 4096 positions in 4 chunks on 4096 samples: each chunk's 16 midpoints stand for it.
  const std::vector<double> sampled = causal.kept_pairs({0, 1024, 2048, 3072, 4096}, 1, 1, {}, 4096);
  double total = 0;
  for (double x : sampled) total += x;
  EXPECT_NEAR(total, 4096.0 * 4097 / 2, 0.02 * 4096 * 4097 / 2);  // the diagonal blocks 6% over
  EXPECT_EQ(sampled[1], 0.0);  // a key chunk after every query

  std::vector<std::int32_t> doc(6, 0);
  const Kernel document =
      engine().compile(example("document"), {.head_dim = 16, .dtype = f32, .device = Device::cpu()});
  const ForwardOptions o{.bind = {{"doc_ids", TensorView::contiguous(doc.data(), i32, {6}, Device::cpu())}}};
  EXPECT_THAT(error_of([&] { document.kept_pairs({0, 4, 8}, 1, 1, o); }),
              HasSubstr("mask_mod at b=0, h=0, q_idx=0, kv_idx=6: evaluate: index [6] is out of range"));
  const std::string e = error_of([&] { causal.kept_pairs({0, 5, 5}, 0, 1, {}, 0); });
  EXPECT_THAT(e, HasSubstr("bounds: edge 2 (5) is not after edge 1 (5)"));
  EXPECT_THAT(e, HasSubstr("B must be >= 1, got 0"));
  EXPECT_THAT(e, HasSubstr("budget must be >= 1, got 0"));
  EXPECT_THAT(error_of([&] { causal.kept_pairs({0}, 1, 1); }), HasSubstr("bounds: expected chunk edges 0 = e_0"));
  std::vector<std::int64_t> many(1026);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::int64_t>(i);
  EXPECT_THAT(error_of([&] { causal.kept_pairs(many, 1, 1); }),
              HasSubstr("bounds: 1025 chunks, more than the 1024 whose blocks kept_pairs counts"));
}

// Bounded work whatever the shapes: a million (b, h) entries on a budget of 400 evaluate a few
// entries at one sample per chunk, and still estimate the whole.
TEST(Positions, KeptPairsStayWithinTheBudget) {
  const Kernel causal = engine().compile(example("causal"), {.head_dim = 16, .dtype = f32, .device = Device::cpu()});
  const std::vector<double> kept = causal.kept_pairs({0, 100, 200}, 1000, 1000, {}, 400);
  EXPECT_EQ(kept[1], 0.0);
  EXPECT_NEAR(kept[2], 1e6 * 100 * 100, 1.0);  // every key of the first chunk before every query of the second
  // A diagonal block's one sample (its midpoint, q_idx = kv_idx) is kept: the whole block counts.
  EXPECT_NEAR(kept[0], 1e6 * 100 * 100, 1.0);
  EXPECT_NEAR(kept[3], 1e6 * 100 * 100, 1.0);
}

}  // namespace
}  // namespace flexjit::test

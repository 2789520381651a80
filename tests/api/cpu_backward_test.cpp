// Kernel::backward on cpu kernels, through the public API (forward first, for out and lse),
// against the float64 backward oracle (tests/support/reference_backward.hpp) for every mission
// mask and score mod, odd lengths, GQA and MQA, fully masked rows, strided views, bf16 and both back
// ends. tests/api/backward_case.cpp says why the tolerance is what it is.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/api/api_test_support.hpp"
#include "tests/api/backward_case.hpp"

namespace flexjit::test {
namespace {

Program source(const std::string& name, const std::string& text) { return Program::from_source(text, name); }

const char* kAlibiSlopes = R"(
slopes: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
)";

TEST(CpuBackward, Causal) {
  BackwardCase c("causal", example("causal"), {2, 4, 2, 37, 37, 16});
  c.run();
  expect_matches_reference(c);
}

TEST(CpuBackward, SlidingWindowWithMoreKeysThanQueries) {
  BackwardCase c("sliding window", example("sliding_window"), {1, 2, 2, 23, 41, 8});
  c.bind_scalar("window", 8);
  c.run();
  expect_matches_reference(c);
  // Keys past the last query row are masked for every row: nothing flows back to them.
  for (int j = 23; j < 41; ++j)
    for (int d = 0; d < 8; ++d) EXPECT_EQ(c.dk[static_cast<std::size_t>(j) * 8 + d], 0.0f) << "key " << j;
}

TEST(CpuBackward, SinkTokensWithMoreQueriesThanKeys) {
  BackwardCase c("sink tokens", example("sink_window"), {2, 2, 1, 40, 27, 8});
  c.bind_scalar("window", 5);
  c.run();
  expect_matches_reference(c);
}

TEST(CpuBackward, LearnedSinkAndItsGradient) {
  BackwardCase c("learned sink", example("learned_sink"), {2, 4, 2, 29, 29, 8});
  c.bind_scalar("window", 6);
  c.bind_floats("sinks", {4}, {0.5f, -0.75f, 1.25f, 0.0f}, true);
  c.run();
  const ReferenceGradients ref = expect_matches_reference(c);
  // The program reads sinks[h] for every batch entry: its gradient sums d sink over b.
  for (int h = 0; h < 4; ++h) EXPECT_NEAR(c.grads["sinks"][h], ref.dsink[h] + ref.dsink[4 + h], 1e-6);
}

TEST(CpuBackward, AlibiSlopesAndTheirGradient) {
  BackwardCase c("alibi slopes", source("alibi_slopes", kAlibiSlopes), {2, 3, 3, 31, 31, 8});
  c.bind_floats("slopes", {3}, {0.25f, -0.125f, 0.5f}, true);
  c.run();
  expect_matches_reference(c);
}

TEST(CpuBackward, AlibiSoftcapWindowOnBothBackEnds) {
  for (CpuBackend backend : {CpuBackend::automatic, CpuBackend::interpreter}) {
    BackwardCase c("alibi softcap window", example("alibi_softcap_window"), {1, 4, 2, 33, 33, 16});
    c.bind_scalar("window", 12);
    c.bind_floats("alibi_slopes", {4}, {0.5f, 0.25f, 0.125f, 0.0625f}, true);
    c.run(backend);
    expect_matches_reference(c);
  }
}

TEST(CpuBackward, SoftcapScalesTheScoreGradient) {
  // CAP = 2 keeps tanh far from linear on these scores, so d score_mod / d score matters.
  BackwardCase c("softcap", source("softcap_2", R"(
CAP = 2.0
def score_mod(score, b, h, q_idx, kv_idx):
    return CAP * torch.tanh(score / CAP)
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
)"), {1, 2, 2, 25, 25, 8});
  c.q = c.uniform(c.q.size(), -3.f, 3.f);
  c.run();
  expect_matches_reference(c);
  BackwardCase shipped("shipped softcap", example("softcap"), {1, 2, 2, 25, 25, 8});
  shipped.run();
  expect_matches_reference(shipped);
}

TEST(CpuBackward, RelativePositionTableAndItsGradient) {
  BackwardCase c("relative position", example("relative_position_bias"), {1, 2, 2, 33, 33, 8});
  c.bind_floats("rel_bias", {2, 257}, c.uniform(2 * 257, -1.f, 1.f), true);
  c.run();
  expect_matches_reference(c);
  // Entries for distances no pair has (kv_idx > q_idx is masked; |distance| < 33) get exactly 0.
  for (int h = 0; h < 2; ++h) {
    EXPECT_EQ(c.grads["rel_bias"][static_cast<std::size_t>(h) * 257 + 128 + 1], 0.0f);
    EXPECT_EQ(c.grads["rel_bias"][static_cast<std::size_t>(h) * 257 + 128 - 33], 0.0f);
    EXPECT_NE(c.grads["rel_bias"][static_cast<std::size_t>(h) * 257 + 128 - 3], 0.0f);
  }
}

TEST(CpuBackward, PrefixLm) {
  BackwardCase c("prefix lm", example("prefix_lm"), {2, 2, 2, 21, 21, 8});
  c.bind_ints("prefix_len", {2}, {5, 12});
  c.run();
  expect_matches_reference(c);
}

TEST(CpuBackward, Documents) {
  BackwardCase c("documents", example("document"), {1, 3, 1, 30, 30, 8});
  std::vector<std::int32_t> ids(30);
  for (int t = 0; t < 30; ++t) ids[static_cast<std::size_t>(t)] = t < 7 ? 0 : t < 19 ? 1 : 2;
  c.bind_ints("doc_ids", {30}, ids);
  c.run();
  expect_matches_reference(c);
}

TEST(CpuBackward, TopKBlocks) {
  // Blocks of 64: query block 1 lists only itself (key block 0 is skipped although causal keeps
  // it), query block 2 lists 0 and 2; head 1 lists differently from head 0.
  BackwardCase c("top-k blocks", example("topk_causal"), {1, 2, 2, 150, 150, 8});
  c.bind_ints("selected", {1, 2, 3, 2}, {0, -1, 1, -1, 0, 2, /* head 1 */ 0, -1, 0, 1, 2, -1});
  c.run();
  expect_matches_reference(c);
}

TEST(CpuBackward, GroupedAndMultiQueryAttention) {
  BackwardCase gqa("gqa 6 heads on 2", source("alibi_slopes", kAlibiSlopes), {2, 6, 2, 17, 26, 8});
  gqa.bind_floats("slopes", {6}, gqa.uniform(6, -0.5f, 0.5f), true);
  gqa.run();
  expect_matches_reference(gqa);
  BackwardCase mqa("mqa 4 heads on 1", example("relative_position_bias"), {1, 4, 1, 26, 17, 8});
  mqa.bind_floats("rel_bias", {4, 257}, mqa.uniform(4 * 257, -1.f, 1.f), true);
  mqa.run();
  expect_matches_reference(mqa);
}

TEST(CpuBackward, FullyMaskedRowsContributeNothing) {
  // Rows 0 and 1 see no key; with a sink their softmax holds the sink alone.
  for (const bool with_sink : {false, true}) {
    std::string text = "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= 2 and kv_idx <= q_idx - 2\n";
    if (with_sink) text += "sinks: Tensor[float32, 1]\ndef sink(b, h):\n    return sinks[h]\n";
    BackwardCase c(with_sink ? "masked rows, sink" : "masked rows", source("masked_rows", text), {1, 2, 2, 12, 12, 8});
    if (with_sink) c.bind_floats("sinks", {2}, {0.3f, -0.2f}, true);
    c.run();
    expect_matches_reference(c);
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 2; ++i)
        for (int d = 0; d < 8; ++d)
          EXPECT_EQ(c.dq[(static_cast<std::size_t>(h) * 12 + i) * 8 + d], 0.0f) << "masked row " << i;
  }
}

TEST(CpuBackward, AFloatTensorReadOnlyByAComparisonHasAZeroGradient) {
  BackwardCase c("thresholds", source("thresholds", R"(
threshold: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score * 2.0 if threshold[h] > 0.0 else score
)"), {1, 2, 2, 9, 9, 8});
  c.bind_floats("threshold", {2}, {1.0f, -1.0f}, true);
  c.run();
  EXPECT_EQ(c.grads["threshold"], (std::vector<float>{0.0f, 0.0f}));
  const ReferenceGradients ref = c.reference();
  EXPECT_LT(relative_l2(c.dq, ref.dq), 1e-5);
  EXPECT_LT(relative_l2(c.dk, ref.dk), 1e-5);
}

TEST(CpuBackward, RunsAreBitIdentical) {
  // Capture gradients are summed per thread, then in thread order: no dependence on timing.
  BackwardCase a("repeat", example("relative_position_bias"), {2, 4, 2, 40, 40, 8});
  a.bind_floats("rel_bias", {4, 257}, a.uniform(4 * 257, -1.f, 1.f), true);
  BackwardCase b = a;
  a.run();
  b.run();
  auto same_bits = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  };
  EXPECT_TRUE(same_bits(a.dq, b.dq));
  EXPECT_TRUE(same_bits(a.dk, b.dk));
  EXPECT_TRUE(same_bits(a.dv, b.dv));
  EXPECT_TRUE(same_bits(a.grads["rel_bias"], b.grads["rel_bias"]));
}

TEST(CpuBackward, StridedViewsGiveTheContiguousResult) {
  // q, dout and dq laid out [B, T, H, D] and viewed as [B, H, T, D] through their strides.
  BackwardCase c("strided", example("causal"), {2, 3, 3, 11, 11, 8});
  c.run();
  const int B = 2, H = 3, T = 11, D = 8;
  auto to_bthd = [&](const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t)
          for (int d = 0; d < D; ++d)
            y[((static_cast<std::size_t>(b) * T + t) * H + h) * D + d] = x[((static_cast<std::size_t>(b) * H + h) * T + t) * D + d];
    return y;
  };
  auto bthd_view = [&](const std::vector<float>& x) {
    return TensorView{const_cast<float*>(x.data()), f32, {B, H, T, D}, {T * H * D, D, H * D, 1}, Device::cpu()};
  };
  const std::vector<float> q = to_bthd(c.q), k = to_bthd(c.k), v = to_bthd(c.v), out = to_bthd(c.out),
                           dout = to_bthd(c.dout);
  std::vector<float> dq(q.size()), dk(q.size()), dv(q.size());
  const Kernel kernel = engine().compile(example("causal"), {.head_dim = D, .dtype = f32, .device = Device::cpu()});
  kernel.backward(bthd_view(q), bthd_view(k), bthd_view(v), bthd_view(out),
                  TensorView::contiguous(c.lse.data(), f32, {B, H, T}, Device::cpu()), bthd_view(dout), bthd_view(dq),
                  bthd_view(dk), bthd_view(dv));
  EXPECT_EQ(dq, to_bthd(c.dq));
  EXPECT_EQ(dk, to_bthd(c.dk));
  EXPECT_EQ(dv, to_bthd(c.dv));
}

TEST(CpuBackward, SixteenBitKernelsRoundTheFloat32Gradients) {
  // A bf16 kernel computes as an f32 one on the same (bf16) values and rounds each gradient once.
  BackwardCase c("bf16", example("causal"), {1, 2, 1, 13, 13, 8});
  auto bits = [](const std::vector<float>& x) {
    std::vector<std::uint16_t> y(x.size());
    for (std::size_t e = 0; e < x.size(); ++e) y[e] = float_to_bf16_bits(x[e]);
    return y;
  };
  auto widened = [](const std::vector<std::uint16_t>& x) {
    std::vector<float> y(x.size());
    for (std::size_t e = 0; e < x.size(); ++e) y[e] = bf16_bits_to_float(x[e]);
    return y;
  };
  const std::vector<std::uint16_t> q = bits(c.q), k = bits(c.k), v = bits(c.v), dout = bits(c.dout);
  std::vector<std::uint16_t> out(q.size()), dq(q.size()), dk(k.size()), dv(k.size());
  std::vector<float> lse(std::size_t{2} * 13);
  auto view = [](const std::vector<std::uint16_t>& x, int H) {
    return TensorView::contiguous(x.data(), bf16, {1, H, 13, 8}, Device::cpu());
  };
  const TensorView lse_view = TensorView::contiguous(lse.data(), f32, {1, 2, 13}, Device::cpu());
  const Kernel half_kernel =
      engine().compile(example("causal"), {.head_dim = 8, .dtype = bf16, .device = Device::cpu()});
  half_kernel.forward(view(q, 2), view(k, 1), view(v, 1), view(out, 2), {.lse = lse_view});
  half_kernel.backward(view(q, 2), view(k, 1), view(v, 1), view(out, 2), lse_view, view(dout, 2), view(dq, 2),
                       view(dk, 1), view(dv, 1));

  const std::vector<float> q32 = widened(q), k32 = widened(k), v32 = widened(v), out32 = widened(out),
                           dout32 = widened(dout);
  std::vector<float> dq32(q.size()), dk32(k.size()), dv32(k.size());
  const Kernel float_kernel =
      engine().compile(example("causal"), {.head_dim = 8, .dtype = f32, .device = Device::cpu()});
  float_kernel.backward(c.q_shaped(q32), c.kv_shaped(k32), c.kv_shaped(v32), c.q_shaped(out32), lse_view,
                        c.q_shaped(dout32), c.q_shaped(dq32), c.kv_shaped(dk32), c.kv_shaped(dv32));
  EXPECT_EQ(dq, bits(dq32));
  EXPECT_EQ(dk, bits(dk32));
  EXPECT_EQ(dv, bits(dv32));
}

}  // namespace
}  // namespace flexjit::test

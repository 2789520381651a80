// The float64 backward oracle (tests/support/reference_backward.hpp) against central finite
// differences of the float64 forward oracle's loss sum(out * dout), on tiny shapes
// (tests/backward/loss_finite_difference.hpp says how the steps and tolerances are chosen).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/backward/attention_case.hpp"
#include "tests/backward/loss_finite_difference.hpp"
#include "tests/support/reference_backward.hpp"

namespace {

using backward_test::AttentionCase;
using backward_test::Shape;
using flexjit::test::ReferenceGradients;

// dq, dk, dv and the gradient of every float capture the oracle returns, against differences.
ReferenceGradients expect_all_gradients_match(AttentionCase& c) {
  const ReferenceGradients g = flexjit::test::reference_backward(c.program, c.inputs(), c.dout.data());
  backward_test::expect_gradient_matches(c, "dq", g.dq, c.q);
  backward_test::expect_gradient_matches(c, "dk", g.dk, c.k);
  backward_test::expect_gradient_matches(c, "dv", g.dv, c.v);
  for (const auto& [name, grad] : g.captures) {
    EXPECT_TRUE(c.floats.count(name)) << name;
    if (c.floats.count(name)) backward_test::expect_gradient_matches(c, "d " + name, grad, c.floats.at(name));
  }
  return g;
}

const char* kCausal = "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n";

TEST(ReferenceBackward, Dense) {
  AttentionCase c("dense", "def score_mod(score, b, h, q_idx, kv_idx):\n    return score\n", {2, 2, 2, 5, 6, 4});
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, Causal) {
  AttentionCase c("causal", kCausal, {1, 2, 2, 7, 7, 8});
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, SlidingWindow) {
  AttentionCase c("sliding window", R"(
window: int
def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < window)
)", {2, 2, 2, 8, 8, 4});
  c.bind_scalar("window", 3);
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, DocumentMask) {
  AttentionCase c("document", R"(
doc_ids: Tensor[int32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return (doc_ids[q_idx] == doc_ids[kv_idx]) & (q_idx >= kv_idx)
)", {1, 2, 2, 7, 7, 4});
  c.bind_int("doc_ids", {7}, {0, 0, 0, 1, 1, 2, 2});
  const ReferenceGradients g = expect_all_gradients_match(c);
  EXPECT_TRUE(g.captures.empty()) << "an int mask tensor has no gradient";
}

TEST(ReferenceBackward, LearnedSinkPerHead) {
  AttentionCase c("learned sink", R"(
window: int
sinks: Tensor[float32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) and (q_idx - kv_idx < window)
def sink(b, h):
    return sinks[h]
)", {2, 2, 2, 6, 6, 4});
  c.bind_scalar("window", 3);
  c.bind_float("sinks", {2}, {0.5f, -0.75f});
  const ReferenceGradients g = expect_all_gradients_match(c);
  ASSERT_EQ(g.dsink.size(), 4u);
  ASSERT_EQ(g.captures.count("sinks"), 1u);
  for (int h = 0; h < 2; ++h)  // sinks[h] is every batch's sink of head h
    EXPECT_NEAR(g.captures.at("sinks")[h], g.dsink[h] + g.dsink[2 + h], 1e-12);
}

TEST(ReferenceBackward, SinkGradientPerBatchAndHead) {
  // One sink per (b, h): the capture's gradient is d sink_bh itself, checked by differences.
  AttentionCase c("sink per (b, h)", kCausal + std::string(R"(
sink_bh: Tensor[float32, 2]
def sink(b, h):
    return sink_bh[b, h]
)"), {2, 2, 1, 5, 5, 4});
  c.bind_float("sink_bh", {2, 2}, {0.25f, -1.0f, 1.5f, 0.0f});
  const ReferenceGradients g = flexjit::test::reference_backward(c.program, c.inputs(), c.dout.data());
  backward_test::expect_gradient_matches(c, "d sink", g.dsink, c.floats.at("sink_bh"));
}

TEST(ReferenceBackward, AlibiSlopes) {
  AttentionCase c("alibi slopes", kCausal + std::string(R"(
slopes: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)
)"), {1, 2, 2, 7, 7, 4});
  c.bind_float("slopes", {2}, {0.25f, -0.125f});
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, Softcap) {
  AttentionCase c("softcap", R"(
CAP = 1.5
def score_mod(score, b, h, q_idx, kv_idx):
    return CAP * torch.tanh(score / CAP)
)", {1, 2, 2, 6, 7, 8});
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, RelativePositionTable) {
  AttentionCase c("relative position table", R"(
table: Tensor[float32, 2]
OFF = 6
def score_mod(score, b, h, q_idx, kv_idx):
    return score + table[h, q_idx - kv_idx + OFF]
)", {1, 2, 2, 7, 7, 4});
  c.bind_float("table", {2, 13}, c.random(26, -1.0f, 1.0f));
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, FullyMaskedRowsContributeNothing) {
  // Rows 0 and 1 see no key; with a sink they still have a softmax (of the sink alone).
  for (const bool with_sink : {false, true}) {
    std::string text = "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= 2 and kv_idx <= q_idx - 2\n";
    if (with_sink) text += "sinks: Tensor[float32, 1]\ndef sink(b, h):\n    return sinks[h]\n";
    AttentionCase c(with_sink ? "masked rows, sink" : "masked rows", text, {1, 2, 2, 6, 6, 4});
    if (with_sink) c.bind_float("sinks", {2}, {0.3f, -0.2f});
    const ReferenceGradients g = expect_all_gradients_match(c);
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 2; ++i)
        for (int d = 0; d < 4; ++d) EXPECT_EQ(g.dq[((h * 6) + i) * 4 + d], 0.0) << "masked row " << i;
  }
}

TEST(ReferenceBackward, GroupedQueryAttention) {
  AttentionCase gqa("gqa 4 heads on 2", kCausal + std::string(R"(
slopes: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score * 0.75 + slopes[h] * (kv_idx - q_idx)
)"), {1, 4, 2, 5, 9, 4});
  gqa.bind_float("slopes", {4}, {0.5f, 0.25f, -0.25f, 0.125f});
  expect_all_gradients_match(gqa);
  AttentionCase mqa("mqa 2 heads on 1", kCausal, {2, 2, 1, 6, 5, 4});
  expect_all_gradients_match(mqa);
}

TEST(ReferenceBackward, AlibiSoftcapWindowAndSink) {
  AttentionCase c("alibi softcap window sink", R"(
window: int
alibi_slopes: Tensor[float32, 1]
scales: Tensor[float32, 1]
sinks: Tensor[float32, 1]
CAP = 2.0
def score_mod(score, b, h, q_idx, kv_idx):
    s = score * scales[h] + alibi_slopes[h] * (kv_idx - q_idx)
    return CAP * torch.tanh(s / CAP)
def mask_mod(b, h, q_idx, kv_idx):
    return 0 <= q_idx - kv_idx < window
def sink(b, h):
    return sinks[h]
)", {2, 2, 2, 7, 7, 4});
  c.bind_scalar("window", 4);
  c.bind_float("alibi_slopes", {2}, {0.3f, -0.2f});
  c.bind_float("scales", {2}, {1.25f, 0.8f});
  c.bind_float("sinks", {2}, {0.1f, 0.6f});
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, BlockSparseTopK) {
  // Query blocks of 16 rows list key blocks of 16 (-1 pads): block 1 sees only itself, block 2
  // skips key block 1. The causal mask applies inside the listed blocks.
  AttentionCase c("top-k blocks", R"(
selected: BlockIndices[16, 16]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
)", {1, 1, 1, 40, 40, 4});
  c.bind_int("selected", {1, 1, 3, 2}, {0, -1, 1, -1, 0, 2});  // [B, H, ceil(40 / 16), K]
  expect_all_gradients_match(c);  // the differences see the blocks through the forward oracle
}

TEST(ReferenceBackward, TokenSparseTopK) {
  // Each query row lists its own keys (-1 pads, repeats count once), one list per kv head shared
  // by its two query heads; the causal mask and an ALiBi score mod apply to the listed keys.
  AttentionCase c("top-k tokens", R"(
selected: TokenIndices
alibi_slopes: Tensor[float32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
def score_mod(score, b, h, q_idx, kv_idx):
    return score + alibi_slopes[h] * (kv_idx - q_idx)
)", {1, 2, 1, 5, 6, 4});
  c.bind_float("alibi_slopes", {2}, {0.3f, -0.2f});
  c.bind_int("selected", {1, 1, 5, 3},  // [B, Hkv, Tq, K]
             {0, -1, -1, 1, 0, 1, 2, 5, -1, 3, 3, 0, 4, 2, 1});
  expect_all_gradients_match(c);
}

TEST(ReferenceBackward, AKvCacheHasNoBackward) {
  AttentionCase c("kv cache", kCausal, {1, 1, 1, 2, 4, 4});
  flexjit::test::ReferenceInputs in = c.inputs();
  const std::int32_t lens[1] = {3};
  in.kv_lens = lens;
  EXPECT_THROW(flexjit::test::reference_backward(c.program, in, c.dout.data()), std::invalid_argument);
}

}  // namespace

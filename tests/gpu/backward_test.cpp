// Kernel::backward on CUDA kernels against the float64 backward oracle
// (tests/support/reference_backward.hpp), through backward_run.hpp: the GPU forward gives out and
// lse, the GPU backward dq, dk, dv and the gradient of every captured float tensor score_mod or
// sink reads (ALiBi slopes, the relative-position bias table, learned sink logits, a dense bias).
// Every example program of the forward's sweep (attention_cases_test.cpp) and the block-sparse
// top-k (block_sparse_test.cpp) in two mixed settings: bf16 D=128 with B, H > 1 and GQA over a
// length that is no tile multiple; fp16 D=64 with Tq != Tkv in PyTorch's [B, T, H, D] layout. Then
// lengths 1, 17 and 1000 x 700 on causal and sliding window, the padded layout, custom scales, the
// kernel without the gradient scatter (no grads asked for) on the programs that have one, and
// math = fast on two score mods within the same tolerance. All with math = exact otherwise, as the
// oracle's interpreter computes. Head dims 64 and 128 on both families, 256 and MLA's 192 / 128 on
// the Hopper one.
// Rows whose keys are all masked: masked_rows and masked_rows_sink (the first 100 query rows see
// no key: dq exactly 0), and keys no row sees in every causal case with Tq < Tkv (dk, dv exactly 0).
//
// KV caches have no backward, and BackwardOptions has no kv_lens to pass one: nothing to refuse.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/gpu/backward_run.hpp"
#include "tests/gpu/position_cases.hpp"

namespace flexjit::gpu_test {
namespace {

using L = Layout;

// attention_cases_test.cpp's kExamples, which the oracle all differentiates, and the block-sparse
// top-k example.
const char* const kPrograms[] = {"alibi",    "alibi_softcap_window", "causal",         "chunked",
                                 "document", "document_window_sinks", "learned_sink",  "prefix_lm",
                                 "sink_window", "sliding_window",    "softcap",        "dense_bias",
                                 "masked_rows", "masked_rows_sink", "two_sided_window", "dilated_window",
                                 "relative_position_bias", "neighbourhood_2d", "head_windows", "tile_table",
                                 "batched_documents", "math_functions", "trig_functions", "topk_causal"};

// The programs with float captures that score_mod or sink reads.
const char* const kCapturePrograms[] = {"alibi_softcap_window", "relative_position_bias", "learned_sink",
                                        "masked_rows_sink", "dense_bias"};

// The mma.sync backward by name (on the H200 the engine would take sm90_bwd by itself): these
// suites keep it covered, on_hopper's run the same cases on the Hopper family.
std::vector<Case> on_mma_sync(std::vector<Case> v) {
  for (Case& c : v) c.backward_family = "sm80_bwd";
  return v;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  // 1. Every program, twice.
  for (const char* p : kPrograms) {
    v.push_back({p, bf16, 128, 2, 4, 2, 300, 300, L::bhsd});
    v.push_back({p, fp16, 64, 1, 6, 3, 177, 300, L::bshd});
  }
  // 2. Lengths: one row (alone, and against many keys), fewer rows than a tile, several tiles of
  //    each with Tq != Tkv.
  const std::pair<int, int> lengths[] = {{1, 1}, {1, 300}, {17, 17}, {1000, 700}};
  for (const char* p : {"causal", "sliding_window"})
    for (auto [tq, tkv] : lengths) v.push_back({p, bf16, 128, 1, 2, 1, tq, tkv, L::bhsd});
  // 3. Rows and heads with gaps that must stay untouched (and dout NaN there, never to be read).
  v.push_back({"alibi_softcap_window", bf16, 64, 1, 2, 1, 333, 333, L::padded});
  v.push_back({"learned_sink", fp16, 128, 1, 2, 1, 333, 333, L::padded});
  v.push_back({"masked_rows_sink", bf16, 128, 2, 4, 2, 250, 250, L::padded});
  // 4. A custom scale.
  v.push_back({"softcap", fp16, 128, 2, 2, 1, 300, 300, L::bhsd, 0.3f});
  v.push_back({"relative_position_bias", bf16, 64, 2, 4, 4, 129, 129, L::bshd, 0.05f});
  return on_mma_sync(v);
}

// math = fast: the forward and backward kernels' tanh.approx, ex2.approx, FMA contraction and
// reciprocal multiplies, within the exact cases' tolerance.
std::vector<Case> fast_math_cases() {
  return on_mma_sync({{"softcap", bf16, 128, 2, 4, 2, 300, 300, L::bhsd, std::nullopt, Math::fast},
                      {"alibi_softcap_window", bf16, 128, 2, 4, 2, 300, 300, L::bhsd, std::nullopt, Math::fast}});
}

std::vector<Case> no_capture_gradient_cases() {
  std::vector<Case> v;
  for (const char* p : kCapturePrograms) v.push_back({p, bf16, 128, 2, 4, 2, 300, 300, L::bhsd});
  return on_mma_sync(v);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name(); }

class Backward : public GpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(Backward, MatchesReference) {
  const Case& c = GetParam();
  // Fresh data per case; the seed is the case name, so a failure reproduces.
  BackwardRun run(c, std::hash<std::string>{}(c.name()));
  run.run_and_check();
}

// The same cases on the Hopper backward (sm90_bwd, by name), where it serves them: sm_90a (the
// tests run on an H200; elsewhere the family's refusal would fail them), block lists of whole
// 64 x 128 tiles (not the top-k example's 64 x 64), and mods that fit its registers (tile_table's
// mask and, at D = 128, trig_functions' score mod spill there, so the engine gives them sm80_bwd:
// nvrtc_backward_test.cpp checks that).
std::vector<Case> on_hopper(std::vector<Case> v) {
  std::vector<Case> out;
  for (Case& c : v) {
    if (c.program == "topk_causal" || c.program == "tile_table") continue;
    if (c.program == "trig_functions" && c.D == 128) continue;
    c.backward_family = "sm90_bwd";
    out.push_back(c);
  }
  return out;
}

// The Hopper family's wide form (D = 256; templates/sm90/attention_bwd_wide.cuh): every program,
// block lists of 64 x 64 included, fp16 in PyTorch's layout, the lengths of (2), the padded layout
// and a custom scale, with sm90_bwd named; and one case where the engine chooses it.
std::vector<Case> on_hopper_wide() {
  std::vector<Case> v;
  for (const char* p : kPrograms) v.push_back({p, bf16, 256, 2, 4, 2, 300, 300, L::bhsd});
  for (const char* p : {"causal", "alibi_softcap_window", "document", "topk_causal"})
    v.push_back({p, fp16, 256, 1, 6, 3, 177, 300, L::bshd});
  for (auto [tq, tkv] : {std::pair{1, 1}, {1, 300}, {17, 17}, {1000, 700}})
    v.push_back({"causal", bf16, 256, 1, 2, 1, tq, tkv, L::bhsd});
  v.push_back({"learned_sink", fp16, 256, 1, 2, 1, 333, 333, L::padded});
  v.push_back({"relative_position_bias", bf16, 256, 2, 4, 4, 129, 129, L::bshd, 0.05f});
  for (Case& c : v) c.backward_family = "sm90_bwd";
  v.push_back({"document", bf16, 256, 1, 4, 2, 250, 400, L::bhsd});
  return v;
}

// Multi-head latent attention's head dims (q, k, dq, dk of 192; v, out, dout, dv of 128) on the
// Hopper family's split form (templates/sm90/attention_bwd_split.cuh): masks walked by q range and
// by the transposed tile map, a score mod with a slope whose captured slopes get a gradient, a
// dense bias's gradient, block lists of 64 x 64, GQA over 2 and 1 kv heads, ragged lengths in
// PyTorch's layout, the padded layout, bf16 and fp16, with sm90_bwd named.
std::vector<Case> on_hopper_mla() {
  std::vector<Case> v;
  for (const char* p : {"causal", "document", "alibi_softcap_window", "topk_causal", "dense_bias", "learned_sink"})
    v.push_back({p, bf16, 192, 2, 4, 2, 300, 300, L::bhsd});
  for (const char* p : {"causal", "alibi_softcap_window", "document", "topk_causal"})
    v.push_back({p, fp16, 192, 1, 6, 3, 177, 300, L::bshd});
  v.push_back({"causal", bf16, 192, 1, 4, 1, 177, 300, L::bhsd});
  v.push_back({"sliding_window", fp16, 192, 2, 4, 1, 300, 177, L::bhsd});
  for (auto [tq, tkv] : {std::pair{1, 1}, {1, 300}, {17, 17}, {1000, 700}})
    v.push_back({"causal", bf16, 192, 1, 2, 1, tq, tkv, L::bhsd});
  v.push_back({"alibi_softcap_window", fp16, 192, 1, 2, 1, 333, 333, L::padded});
  v.push_back({"relative_position_bias", bf16, 192, 2, 4, 4, 129, 129, L::bshd, 0.05f});
  v.push_back({"document", bf16, 192, 1, 4, 2, 250, 400, L::bhsd});
  for (Case& c : v) c.backward_family = "sm90_bwd", c.Dv = 128;
  return v;
}

INSTANTIATE_TEST_SUITE_P(Examples, Backward, ::testing::ValuesIn(cases()), case_name);
INSTANTIATE_TEST_SUITE_P(HopperWide, Backward, ::testing::ValuesIn(on_hopper_wide()), case_name);
INSTANTIATE_TEST_SUITE_P(HopperMla, Backward, ::testing::ValuesIn(on_hopper_mla()), case_name);
INSTANTIATE_TEST_SUITE_P(GlobalPositions, Backward, ::testing::ValuesIn(backward_position_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(FastMath, Backward, ::testing::ValuesIn(fast_math_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Hopper, Backward, ::testing::ValuesIn(on_hopper(cases())), case_name);
INSTANTIATE_TEST_SUITE_P(HopperFastMath, Backward, ::testing::ValuesIn(on_hopper(fast_math_cases())), case_name);

// BackwardOptions::grads empty: the main kernel (no scatter into capture gradients) on programs
// whose score_mod or sink reads a float capture; dq, dk, dv as with the gradients.
class BackwardWithoutCaptureGradients : public GpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(BackwardWithoutCaptureGradients, MatchesReference) {
  const Case& c = GetParam();
  BackwardRun run(c, std::hash<std::string>{}(c.name()));
  run.request_capture_gradients(false);
  const BackwardFigures f = run.run_and_check();
  EXPECT_TRUE(f.captures.empty());
}

INSTANTIATE_TEST_SUITE_P(Examples, BackwardWithoutCaptureGradients, ::testing::ValuesIn(no_capture_gradient_cases()),
                         case_name);

// BackwardOptions::deterministic on both families: a mask walked by q range (causal, GQA, several
// kv tiles per query tile), one walked by the transposed tile map (documents), a block list and a
// score mod whose captured tensor gets a gradient; twice each, dq, dk and dv the same bit for bit,
// and as close to the oracle as the default kernels. The Hopper family's wide and split forms too.
std::vector<Case> deterministic_cases() {
  std::vector<Case> v = {{"causal", bf16, 128, 2, 4, 2, 1000, 700, L::bhsd},
                         {"document", bf16, 128, 2, 4, 2, 1000, 1000, L::bhsd},
                         {"topk_causal", fp16, 64, 1, 6, 3, 177, 300, L::bshd},
                         {"alibi_softcap_window", bf16, 64, 1, 2, 1, 333, 333, L::padded}};
  v = on_mma_sync(v);
  for (Case c : on_hopper(v)) v.push_back(c);
  for (const char* p : {"causal", "document", "topk_causal"}) {
    Case wide{p, bf16, 256, 2, 4, 2, 1000, 700, L::bhsd};
    wide.backward_family = "sm90_bwd";
    v.push_back(wide);
  }
  // The narrow form's dQ writer: at D = 64 (the warpgroups' blocks in turn), with kv tiles that no
  // query reaches (an empty walk), and along long chains of turns.
  for (Case narrow : {Case{"causal", fp16, 64, 1, 4, 2, 300, 1000, L::bshd},
                      Case{"sliding_window", bf16, 128, 1, 2, 1, 3000, 3000, L::bhsd}}) {
    narrow.backward_family = "sm90_bwd";
    v.push_back(narrow);
  }
  // The split form (MLA's 192 / 128), a captured tensor's gradient included.
  for (Case mla : {Case{"causal", bf16, 192, 2, 4, 2, 1000, 700, L::bhsd},
                   Case{"document", bf16, 192, 2, 4, 2, 1000, 1000, L::bhsd},
                   Case{"topk_causal", fp16, 192, 1, 6, 3, 177, 300, L::bshd},
                   Case{"alibi_softcap_window", bf16, 192, 1, 2, 1, 333, 333, L::padded}}) {
    mla.Dv = 128;
    mla.backward_family = "sm90_bwd";
    v.push_back(mla);
  }
  return v;
}

class DeterministicBackward : public GpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(DeterministicBackward, MatchesReferenceAndRepeatsItself) {
  const Case& c = GetParam();
  BackwardRun run(c, std::hash<std::string>{}(c.name()));
  run.deterministic(true);
  run.run_and_check();
}

INSTANTIATE_TEST_SUITE_P(Examples, DeterministicBackward, ::testing::ValuesIn(deterministic_cases()), case_name);

}  // namespace
}  // namespace flexjit::gpu_test

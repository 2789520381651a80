// Every example program (block-sparse top-k: block_sparse_test.cpp) on the GPU against the float64
// reference, over a covering set of dtypes, head dims, lengths, batch/heads, GQA and memory layouts
// (not the full product: each axis is swept on a few programs, and every program runs in two mixed
// settings), on every kernel family that serves the case. These kernels compute with math = exact,
// as the reference's interpreter does; FastMath runs every program with a score_mod or a sink with
// math = fast (the default) within the same tolerance.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "jit/cuda_driver.hpp"
#include "templates/sm90/tiles.cuh"
#include "tests/gpu/attention_case.hpp"
#include "tests/gpu/position_cases.hpp"

namespace flexjit::gpu_test {
namespace {

using L = Layout;

const char* const kExamples[] = {"alibi",    "alibi_softcap_window", "causal",         "chunked",
                                 "document", "document_window_sinks", "learned_sink",  "prefix_lm",
                                 "sink_window", "sliding_window",    "softcap",        "dense_bias",
                                 "masked_rows", "masked_rows_sink", "two_sided_window", "dilated_window",
                                 "relative_position_bias", "neighbourhood_2d", "head_windows", "tile_table",
                                 "batched_documents", "math_functions", "trig_functions"};

std::vector<Case> cases() {
  std::vector<Case> v;
  // 1. Every program, twice: bf16 D=128 with B, H > 1 and GQA over a length that is not a
  //    multiple of any tile; fp16 D=64 with Tq != Tkv in PyTorch's [B, T, H, D] layout.
  for (const char* p : kExamples) {
    v.push_back({p, bf16, 128, 2, 4, 2, 1000, 1000, L::bhsd});
    v.push_back({p, fp16, 64, 2, 6, 3, 177, 300, L::bshd});
  }
  // 2. Head dims 64, 96 (odd), 128, 256 x bf16 / fp16, on a score mod + window and on a sink.
  for (const char* p : {"alibi_softcap_window", "learned_sink"})
    for (int d : {64, 96, 128, 256})
      for (DType t : {bf16, fp16}) v.push_back({p, t, d, 1, 2, 1, 333, 333, L::padded});
  v.push_back({"document", bf16, 256, 2, 2, 2, 500, 500, L::bhsd});
  v.push_back({"dense_bias", fp16, 80, 1, 3, 1, 200, 260, L::bhsd});
  // 3. Lengths 1, 17, 1000, 4096 and Tq != Tkv (decode-like 1 x 4096, 4096 x 1000, 100 x 1).
  const std::pair<int, int> lengths[] = {{1, 1}, {17, 17}, {4096, 4096}, {1, 4096}, {4096, 1000}, {1000, 4096}, {100, 1}};
  for (const char* p : {"causal", "sliding_window", "document_window_sinks", "prefix_lm"})
    for (auto [tq, tkv] : lengths) v.push_back({p, bf16, 128, 1, 2, 1, tq, tkv, L::bhsd});
  // 4. Chunk boundaries (CHUNK = 8192) and a custom scale.
  v.push_back({"chunked", bf16, 64, 1, 1, 1, 9000, 9000, L::bhsd});
  v.push_back({"softcap", fp16, 128, 2, 2, 1, 300, 300, L::bhsd, 0.3f});
  v.push_back({"alibi", bf16, 64, 3, 8, 8, 129, 129, L::bshd, 0.05f});
  // 5. The Hopper family's one-consumer tile, two CTAs to an SM (64 x 64, 2 stages): its own
  //    register split and launch bounds, on a tensor-reading mask, a score mod and a sink.
  for (const char* p : {"document", "alibi_softcap_window", "sink_window", "learned_sink"})
    for (int d : {64, 128}) {
      Case c{p, bf16, d, 2, 4, 2, 1000, 1000, L::bhsd};
      c.family = "sm90_fwd";
      c.tile = TileShape{.block_m = 64, .block_n = 64, .warps = 8, .stages = 2};
      v.push_back(c);
    }
  // 5b. The Hopper family's persistent grid at D = 128 (CTAs taking query tiles from a counter,
  //     the next tile's Q and K/V loaded under this one's epilogue): more query tiles than a wave
  //     of CTAs, on every program, and the lengths of section 3. The table's choice, so masks
  //     that follow a tile map (and programs whose mods would spill in the persistent loop) run
  //     one CTA per tile instead; asked for, the persistent grid runs a tile-map mask too.
  for (const char* p : kExamples) {
    Case c{p, bf16, 128, 2, 12, 4, 1000, 1000, L::bhsd};  // 192 query tiles
    c.family = "sm90_fwd";
    v.push_back(c);
  }
  for (const char* p : {"causal", "document_window_sinks"})
    for (auto [tq, tkv] : lengths) {
      Case c{p, bf16, 128, 3, 16, 4, tq, tkv, L::bhsd};
      c.family = "sm90_fwd";
      v.push_back(c);
      c.tile = TileShape{.block_m = 128, .block_n = 128, .warps = 12, .stages = 3, .persistent = true};
      if (std::string(p) != "causal") v.push_back(c);
    }
  // 5c. MLA's head dims (q and k of 192, v and out of 128; sm90_fwd on sm_90a, sm80_fwd below):
  //     a mask, a score mod with a window, a tensor-reading mask, GQA and PyTorch's layout; and a
  //     value head dim only sm80_fwd serves.
  for (const char* p : {"causal", "alibi_softcap_window", "document"}) {
    Case c{p, bf16, 192, 2, 4, 2, 1000, 1000, L::bhsd};
    c.Dv = 128;
    v.push_back(c);
  }
  {
    Case c{"causal", fp16, 192, 1, 6, 3, 177, 300, L::bshd};
    c.Dv = 128;
    v.push_back(c);
    c = Case{"sliding_window", bf16, 128, 1, 2, 1, 333, 333, L::padded};
    c.Dv = 64;
    v.push_back(c);
  }
  // 6. Both families: the automatic choice takes sm90_fwd for the head dims it serves on an sm_90a
  //    device; every such case runs again on sm80_fwd.
  const std::size_t automatic = v.size();
  for (std::size_t i = 0; i < automatic; ++i)
    if (flexjit::sm90::serves_head_dims(v[i].D, v[i].dv()) && !v[i].tile && v[i].family.empty()) {
      Case c = v[i];
      c.family = "sm80_fwd";
      v.push_back(c);
    }
  return v;
}

class Attention : public GpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(Attention, MatchesReference) {
  const Case& c = GetParam();
  if (c.family == "sm90_fwd" && jit::device_arch(0) != "sm_90a") GTEST_SKIP() << "sm90_fwd runs on sm_90a only";
  // Fresh data per case; the seed is the case name, so a failure reproduces.
  AttentionRun run(c, std::hash<std::string>{}(c.name()));
  run.run_and_check();
  // Masks that read captured tensors: again, following a built block mask.
  if (run.kernel().needs_block_mask()) {
    run.use_block_mask(true);
    run.run_and_check();
    const auto& m = run.map_figures();
    std::cout << fmt::format("[block mask] {}: visited {} of {} tile pairs ({} full); tiles with a kept element {}\n",
                             c.name(), m.visited, m.pairs, m.full, m.exact_visited);
  }
}

// math = fast: tanh.approx, ex2.approx, FMA contraction and reciprocal multiplies stay below what
// bf16 and fp16 outputs show. Settings of the first sweep above, a larger scale and D=256.
std::vector<Case> fast_math_cases() {
  const char* const score_programs[] = {"alibi",        "alibi_softcap_window",   "softcap",
                                        "dense_bias",   "relative_position_bias", "learned_sink",
                                        "masked_rows_sink", "math_functions", "trig_functions"};
  std::vector<Case> v;
  for (const char* p : score_programs) {
    v.push_back({p, bf16, 128, 2, 4, 2, 1000, 1000, L::bhsd, std::nullopt, Math::fast});
    v.push_back({p, fp16, 64, 2, 6, 3, 177, 300, L::bshd, std::nullopt, Math::fast});
  }
  v.push_back({"softcap", fp16, 128, 2, 2, 1, 300, 300, L::bhsd, 0.3f, Math::fast});
  v.push_back({"alibi_softcap_window", bf16, 256, 1, 2, 1, 333, 333, L::padded, std::nullopt, Math::fast});
  return v;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name(); }

INSTANTIATE_TEST_SUITE_P(Examples, Attention, ::testing::ValuesIn(cases()), case_name);
INSTANTIATE_TEST_SUITE_P(FastMath, Attention, ::testing::ValuesIn(fast_math_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(GlobalPositions, Attention, ::testing::ValuesIn(forward_position_cases()), case_name);

}  // namespace
}  // namespace flexjit::gpu_test

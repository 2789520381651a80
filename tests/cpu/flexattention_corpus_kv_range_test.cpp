// The kv range of every corpus program (tests/cpu/flexattention_corpus/*.py), as written: it holds
// every key the mask keeps, for every query tile tried; and the programs whose masks bound the keys
// (windows, prefixes, chunks, float bounds, ...) keep a closed form, however they are written. The
// same for the q range (the backward's, kv_range transposed), over key tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>

#include "compiler/tile_ranges.hpp"
#include "compiler/pipeline.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "random_program.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cpu_test;

const fs::path kCorpus = fs::path(FLEXJIT_SOURCE_DIR) / "tests/cpu/flexattention_corpus";

// Programs whose mask bounds the keys of a query tile (the others have no mask, or one that reads
// tensors at key positions or keeps keys on a stride). A program leaving this list is a lost range.
const std::set<std::string> kBounded = {
    "alibi", "aligned_causal_ratio", "aux_request_import", "band_abs_shared", "bias_table_shape", "causal",
    "chunked_causal", "dilated_sliding_window", "document_lengths_shape", "float_bound_window", "float_width_window",
    "global_tokens", "gpt_oss_sink", "growing_prefix", "gym_document_setup", "head_specific", "inverted_causal",
    "lru_cache_factory", "natten_2d", "natten_tuple_defaults", "partial_band", "per_batch_lengths",
    "prefix_lm", "prefix_lm_per_batch", "query_prefix_or_causal", "sliding_window_generator",
    "sliding_window_runtime", "star_import_combinators", "stripe_and_local", "tensor_annotations_unimported",
    "tensor_constant_offset", "tensor_offset_per_call", "tuple_helpers", "tuple_runtime_choice",
    "typing_aliases",
};

// The same for the queries of a key tile: the programs of kBounded but these, whose query bound is
// lost: q_idx < 6 (global tokens) or q_idx < 5 joined to causal makes the hull every query; q_idx
// inside float arithmetic (kv_idx <= q_idx * ratio, kv_idx < q_idx * 0.5 + 3.0) is not inverted; a
// clamp of q_idx // 10 (natten_2d's min / max) is not linear in q_idx.
const std::set<std::string> kQueryBoundLost = {"aligned_causal_ratio", "global_tokens", "growing_prefix", "natten_2d",
                                               "query_prefix_or_causal"};

std::vector<fs::path> corpus_programs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.path().extension() == ".py") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// [lo, hi) of r for the tile [t_lo, t_hi] of the tile index, with `extent` (Tkv or Tq).
std::pair<std::int64_t, std::int64_t> range_at(const compiler::IndexRange& r, const compiler::RangeAxes& axes, ir::Env env,
                                               std::int64_t b, std::int64_t h, std::int64_t t_lo, std::int64_t t_hi,
                                               std::int64_t extent) {
  env.b = b;
  env.h = h;
  env.tile_bounds[axes.tile_lo] = t_lo;
  env.tile_bounds[axes.tile_hi] = t_hi;
  env.tile_bounds[axes.extent] = extent;
  return {ir::evaluate(r.lo, env).as_int(), ir::evaluate(r.hi, env).as_int()};
}

// Every index the mask keeps for some index of a tile lies in r, for tiles of several sizes over a
// tile index of `tiles` positions and an unknown of `extent` positions.
void check_holds_every_kept(const ir::Program& p, const compiler::IndexRange& r, const compiler::RangeAxes& axes,
                            std::int64_t tiles, std::int64_t extent) {
  const bool keys = std::string(axes.unknown) == ir::kParamKv;
  std::mt19937_64 rng(23);
  for (int world = 0; world < 3; ++world) {
    const RandomWorld w = RandomWorld::for_program(p, 96, rng);
    for (std::int64_t len : {1, 7, 16, 67})
      for (std::int64_t t_lo = 0; t_lo < tiles; t_lo += len)
        for (std::int64_t b = 0; b < 2; ++b)
          for (std::int64_t h = 0; h < 4; ++h) {
            const std::int64_t t_hi = std::min(tiles - 1, t_lo + len - 1);
            const auto [lo, hi] = range_at(r, axes, w.env, b, h, t_lo, t_hi, extent);
            ASSERT_TRUE(0 <= lo && lo <= extent && 0 <= hi && hi <= extent) << lo << " " << hi;
            for (std::int64_t ti = t_lo; ti <= t_hi; ++ti)
              for (std::int64_t ui = 0; ui < extent; ++ui) {
                if (ui >= lo && ui < hi) continue;
                const std::int64_t qi = keys ? ti : ui, ki = keys ? ui : ti;
                ASSERT_FALSE(ir::eval_mask(p, w.env, b, h, qi, ki))
                    << "range [" << lo << ", " << hi << ") of " << axes.tile_index << " [" << t_lo << ", " << t_hi
                    << "] excludes " << axes.unknown << " " << ui << ", kept for q_idx " << qi << ", kv_idx " << ki
                    << " (b " << b << ", h " << h << ")";
              }
          }
  }
}

class CorpusKvRange : public testing::TestWithParam<fs::path> {};

TEST_P(CorpusKvRange, HoldsEveryKeptKey) {
  const std::string name = GetParam().stem().string();
  const ir::Program p = compiler::build_ir(dsl::SourceFile::from_path(GetParam().string()));
  const compiler::KvRange r = compiler::kv_range(p);
  EXPECT_EQ(!compiler::kv_range_is_full(r), kBounded.count(name) > 0)
      << "[" << ir::to_string(r.lo) << ", " << ir::to_string(r.hi) << ")";
  if (!p.mask_mod) return;
  check_holds_every_kept(p, r, compiler::kKvRangeAxes, /*Tq=*/67, /*Tkv=*/90);
}

// The transposed range (the backward's queries per key tile) holds every query the mask keeps; the
// masks that bound the keys bound the queries too but for kQueryBoundLost (kv < 4 and
// kv < prefix_len[b] decide per key tile, as query-only terms do per query tile in kv_range).
TEST_P(CorpusKvRange, QRangeHoldsEveryKeptQuery) {
  const std::string name = GetParam().stem().string();
  const ir::Program p = compiler::build_ir(dsl::SourceFile::from_path(GetParam().string()));
  const compiler::QRange r = compiler::q_range(p);
  EXPECT_EQ(!compiler::q_range_is_full(r), kBounded.count(name) > 0 && kQueryBoundLost.count(name) == 0)
      << "[" << ir::to_string(r.lo) << ", " << ir::to_string(r.hi) << ")";
  if (!p.mask_mod) return;
  check_holds_every_kept(p, r, compiler::kQRangeAxes, /*Tkv=*/90, /*Tq=*/67);
}

INSTANTIATE_TEST_SUITE_P(Programs, CorpusKvRange, testing::ValuesIn(corpus_programs()),
                         [](const testing::TestParamInfo<fs::path>& info) { return info.param.stem().string(); });

}  // namespace

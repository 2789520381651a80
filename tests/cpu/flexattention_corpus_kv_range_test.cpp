// The kv range of every corpus program (tests/cpu/flexattention_corpus/*.py), as written: it holds
// every key the mask keeps, for every query tile tried; and the programs whose masks bound the keys
// (windows, prefixes, chunks, float bounds, ...) keep a closed form, however they are written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include "compiler/kv_range.hpp"
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
    "alibi", "aligned_causal_ratio", "band_abs_shared", "bias_table_shape", "causal", "chunked_causal",
    "dilated_sliding_window", "document_lengths_shape", "float_bound_window", "float_width_window",
    "global_tokens", "gpt_oss_sink", "growing_prefix", "head_specific", "inverted_causal",
    "lru_cache_factory", "natten_2d", "natten_tuple_defaults", "partial_band", "per_batch_lengths",
    "prefix_lm", "prefix_lm_per_batch", "query_prefix_or_causal", "sliding_window_generator",
    "sliding_window_runtime", "star_import_combinators", "stripe_and_local", "tensor_annotations_unimported",
    "tensor_constant_offset", "tensor_offset_per_call", "tuple_helpers", "tuple_runtime_choice",
    "typing_aliases",
};

std::vector<fs::path> corpus_programs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.path().extension() == ".py") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::pair<std::int64_t, std::int64_t> range_at(const compiler::KvRange& r, ir::Env env, std::int64_t b, std::int64_t h,
                                               std::int64_t q_lo, std::int64_t q_hi, std::int64_t Tkv) {
  env.b = b;
  env.h = h;
  env.tile_bounds[compiler::kKvRangeQLo] = q_lo;
  env.tile_bounds[compiler::kKvRangeQHi] = q_hi;
  env.tile_bounds[compiler::kKvRangeTkv] = Tkv;
  return {ir::evaluate(r.lo, env).as_int(), ir::evaluate(r.hi, env).as_int()};
}

class CorpusKvRange : public testing::TestWithParam<fs::path> {};

TEST_P(CorpusKvRange, HoldsEveryKeptKey) {
  const std::string name = GetParam().stem().string();
  const ir::Program p = compiler::build_ir(dsl::SourceFile::from_path(GetParam().string()));
  const compiler::KvRange r = compiler::kv_range(p);
  EXPECT_EQ(!compiler::kv_range_is_full(r), kBounded.count(name) > 0)
      << "[" << ir::to_string(r.lo) << ", " << ir::to_string(r.hi) << ")";
  if (!p.mask_mod) return;
  std::mt19937_64 rng(23);
  constexpr std::int64_t Tq = 67, Tkv = 90;
  for (int world = 0; world < 3; ++world) {
    const RandomWorld w = RandomWorld::for_program(p, 96, rng);
    for (std::int64_t len : {1, 7, 16, 67})
      for (std::int64_t q_lo = 0; q_lo < Tq; q_lo += len)
        for (std::int64_t b = 0; b < 2; ++b)
          for (std::int64_t h = 0; h < 4; ++h) {
            const std::int64_t q_hi = std::min(Tq - 1, q_lo + len - 1);
            const auto [lo, hi] = range_at(r, w.env, b, h, q_lo, q_hi, Tkv);
            ASSERT_TRUE(0 <= lo && lo <= Tkv && 0 <= hi && hi <= Tkv) << lo << " " << hi;
            for (std::int64_t qi = q_lo; qi <= q_hi; ++qi)
              for (std::int64_t ki = 0; ki < Tkv; ++ki) {
                if (ki >= lo && ki < hi) continue;
                ASSERT_FALSE(ir::eval_mask(p, w.env, b, h, qi, ki))
                    << "range [" << lo << ", " << hi << ") of q [" << q_lo << ", " << q_hi << "] excludes kv " << ki
                    << " kept for q_idx " << qi << " (b " << b << ", h " << h << ")";
              }
          }
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, CorpusKvRange, testing::ValuesIn(corpus_programs()),
                         [](const testing::TestParamInfo<fs::path>& info) { return info.param.stem().string(); });

}  // namespace

// Decode against a KV cache on CUDA kernels (ForwardOptions::kv_lens, page_table), against the
// float64 oracle: the decode programs of tests/support/decode_case.hpp (which the cpu kernels run
// in tests/api/kv_cache_test.cpp) under GQA and MQA, one and four new tokens, pages of 16, 64 and
// 256 keys and contiguous caches, bf16 (one row fp16, one exact math) at head dims 128, 64 and
// 256, with lengths that span several key chunks and splits, and at global positions (q_offset,
// kv_offset). Chunks of 64 new tokens and more (chunked prefill) run on the chunk kernel
// (sm80_chunk) instead: the same programs, layouts and checks. Then what the kernels must do with
// values the host never reads: a bad length or page makes NaN rows of its own sequence only.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <random>

#include "jit/cuda_driver.hpp"
#include "tests/gpu/decode_run.hpp"

namespace flexjit::gpu_test {
namespace {

using test::DecodeCase;
using test::DecodeShape;

// Several key chunks and splits per sequence; one sequence empty; no length a multiple of a page.
const std::vector<std::int32_t> kLengths = {37, 0, 1000, 129, 4099};
const std::vector<std::string> kFewPrograms = {"causal", "learned_sink", "documents"};

// attention_case.cpp's: the relative L2 error of out by dtype, 1e-2 on each row's lse.
test::DecodeTolerance tolerance(DType d) {
  return {.out_rel_l2 = d == DType::bf16 ? 2e-2 : 5e-3,
          .lse_rel_l2 = std::numeric_limits<double>::infinity(),
          .lse_max_abs = 1e-2};
}

DecodeShape shape(int Hq, int Hkv, int Tq, int page_size, int D = 128, DType dtype = DType::bf16) {
  return {.Hq = Hq, .Hkv = Hkv, .Tq = Tq, .page_size = page_size, .D = D, .lens = kLengths, .dtype = dtype};
}

// A shard of a longer sequence (ForwardOptions::q_offset, kv_offset), for the programs that index
// no tensor by position.
DecodeShape at(DecodeShape s, int q_offset, int kv_offset) {
  s.q_offset = q_offset, s.kv_offset = kv_offset;
  return s;
}
const std::vector<std::string> kPositionPrograms = {"causal", "sliding_window", "window_with_sink_tokens",
                                                    "learned_sink", "alibi"};

std::string shape_name(const DecodeShape& s, Math math = Math::fast) {
  return fmt::format("{}_{}_d{}{}{}", test::decode_layout_name(s), dtype_name(s.dtype), s.D,
                     s.dv() != s.D ? fmt::format("v{}", s.dv()) : "", math == Math::exact ? "_exact" : "");
}

Kernel decode_kernel(const Program& p, const DecodeShape& s, Math math) {
  return engine().compile(p, {.head_dim = s.D, .head_dim_v = s.Dv, .dtype = s.dtype, .family = s.family, .math = math});
}

// One decode program on an uploaded case against the oracle; the sequences in nan_sequences
// must come out NaN. Prints the figures as attention_case.cpp does.
void check_program(const DecodeCase& c, DecodeOnGpu& gpu, const std::string& name, Math math = Math::fast,
                   const std::vector<int>& nan_sequences = {}) {
  const Program p = test::load_decode_program(test::decode_program(name));
  const test::DecodeBindings bound(p, c);
  const std::string what = fmt::format("{} {} B={}", name, shape_name(c.shape, math), c.B);
  test::DecodeOutputs got;
  try {
    got = gpu.run(decode_kernel(p, c.shape, math), bound);
  } catch (const Error& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return;
  }
  const test::DecodeFigures f =
      test::expect_decode_matches(c, c.reference(p, bound.env), got, tolerance(c.shape.dtype), what, nan_sequences);
  std::cout << fmt::format("[figures] {}: out_rel_l2={:.3e} lse_max_err={:.3e} keyless_rows={} finite_rows={}\n",
                           what, f.out_rel_l2, f.lse_max_abs, f.keyless_rows, f.finite_rows);
}

// A row of the matrix: one cache, uploaded once, under several programs.
struct Row {
  DecodeShape shape;
  std::vector<std::string> programs{};  // empty: every decode program
  Math math = Math::fast;
};
void PrintTo(const Row& r, std::ostream* os) { *os << shape_name(r.shape, r.math); }
std::string row_name(const testing::TestParamInfo<Row>& info) { return shape_name(info.param.shape, info.param.math); }

class DecodePrograms : public GpuTest, public testing::WithParamInterface<Row> {};

TEST_P(DecodePrograms, MatchTheReference) {
  const Row& row = GetParam();
  if (row.shape.family == "sm90_mla" && jit::device_arch(0) != "sm_90a") GTEST_SKIP() << "sm90_mla runs on sm_90a only";
  const DecodeCase c(row.shape);
  DecodeOnGpu gpu(c);
  if (!row.programs.empty()) {
    for (const std::string& name : row.programs) check_program(c, gpu, name, row.math);
    return;
  }
  for (const test::DecodeProgram& p : test::kDecodePrograms) check_program(c, gpu, p.name, row.math);
}

std::vector<Row> bf16_rows() {
  std::vector<Row> rows;
  for (const auto& [Hq, Hkv] : {std::pair{32, 8}, std::pair{8, 1}})
    for (int Tq : {1, 4})
      for (int page_size : {16, 64, 256, 0}) rows.push_back({shape(Hq, Hkv, Tq, page_size)});
  return rows;
}
INSTANTIATE_TEST_SUITE_P(Bf16, DecodePrograms, testing::ValuesIn(bf16_rows()), row_name);

INSTANTIATE_TEST_SUITE_P(Others, DecodePrograms,
                         testing::Values(Row{shape(32, 8, 4, 64, 128, DType::fp16)},
                                         Row{shape(32, 8, 4, 16, 64), kFewPrograms},
                                         Row{shape(8, 1, 1, 0, 64), kFewPrograms},
                                         Row{shape(32, 8, 1, 256, 256), kFewPrograms},
                                         Row{shape(8, 1, 4, 64, 256), kFewPrograms},
                                         Row{shape(32, 8, 4, 16), {"softcap", "alibi"}, Math::exact}),
                         row_name);

// Chunked prefill on the chunk kernel: test::prefill_chunk (100 new tokens per sequence, one query
// tile) under every program, block lists of 16 x 16 included, over pages of 16, 64 and 256 keys and
// a contiguous cache; and chunks of 333 tokens (several query tiles, a ragged last one) against up
// to 1500 keys, fp16, head dims 64 and 256, exact math, and multi-head latent attention's q and k
// of 192 with v and out of 128.
DecodeShape long_chunk(DecodeShape s) {
  s.Tq = 333;
  s.lens = {333, 900, 1500, 401};
  return s;
}
DecodeShape with_dv(DecodeShape s, int Dv) {
  s.Dv = Dv;
  return s;
}
INSTANTIATE_TEST_SUITE_P(PrefillChunk, DecodePrograms,
                         testing::Values(Row{test::prefill_chunk(shape(8, 2, 1, 16))},
                                         Row{test::prefill_chunk(shape(8, 2, 1, 64))},
                                         Row{test::prefill_chunk(shape(8, 2, 1, 256))},
                                         Row{test::prefill_chunk(shape(8, 2, 1, 0))},
                                         Row{long_chunk(shape(8, 2, 1, 64)), kFewPrograms},
                                         Row{long_chunk(shape(8, 1, 1, 0)), kFewPrograms},
                                         Row{long_chunk(shape(4, 2, 1, 16, 128, DType::fp16)), kFewPrograms},
                                         Row{long_chunk(shape(8, 2, 1, 256, 64)), kFewPrograms},
                                         Row{long_chunk(shape(4, 2, 1, 32, 256)), kFewPrograms},
                                         Row{with_dv(long_chunk(shape(8, 2, 1, 64, 192)), 128), kFewPrograms},
                                         Row{with_dv(test::prefill_chunk(shape(8, 1, 1, 0, 192)), 128), kFewPrograms},
                                         Row{test::prefill_chunk(shape(8, 2, 1, 16)), {"softcap", "alibi"}, Math::exact}),
                         row_name);

// Decode with v of its own head dim on the decode_mla family: multi-head latent attention's
// absorbed form (one kv head of 576 columns, v its first 512: a view of k, no copy) under 16, 64
// and 128 query heads (one, four and eight CTAs of rows per token; sixteen query heads with two
// new tokens), pages of 64 and 16 keys and a contiguous cache; 192 / 128 with v of its own
// storage; fp16. Every decode program without block lists.
DecodeShape mla(int Hq, int Tq, int page_size, int D = 576, int Dv = 512, bool v_in_k = true,
                DType dtype = DType::bf16) {
  DecodeShape s = shape(Hq, 1, Tq, page_size, D, dtype);
  s.Dv = Dv, s.v_in_k = v_in_k, s.family = "decode_mla";
  return s;
}
const std::vector<std::string> kMlaPrograms = {"causal",    "every_key", "sliding_window", "window_with_sink_tokens",
                                               "learned_sink", "alibi",   "softcap",        "documents",
                                               "relative_position_bias", "prefix_lm"};
INSTANTIATE_TEST_SUITE_P(Mla, DecodePrograms,
                         testing::Values(Row{mla(16, 1, 64), kMlaPrograms}, Row{mla(128, 1, 64), kMlaPrograms},
                                         Row{mla(64, 1, 16), kFewPrograms}, Row{mla(16, 2, 0), kFewPrograms},
                                         Row{mla(16, 1, 64, 576, 512, true, DType::fp16), kFewPrograms},
                                         Row{mla(32, 4, 16, 192, 128, false), kMlaPrograms},
                                         Row{mla(8, 1, 0, 192, 128, false), kFewPrograms}),
                         row_name);

// The same absorbed form on the Hopper family (sm90_mla: wgmma, a producer warpgroup gathering the
// rows, two consumers sharing each pair of chunks), named: 16 and 128 query heads over pages of 64,
// 64 over pages of 16, two new tokens of 16 heads in a contiguous cache, fp16.
DecodeShape mla_sm90(int Hq, int Tq, int page_size, DType dtype = DType::bf16) {
  DecodeShape s = mla(Hq, Tq, page_size, 576, 512, true, dtype);
  s.family = "sm90_mla";
  return s;
}
INSTANTIATE_TEST_SUITE_P(HopperMla, DecodePrograms,
                         testing::Values(Row{mla_sm90(16, 1, 64), kMlaPrograms}, Row{mla_sm90(128, 1, 64), kMlaPrograms},
                                         Row{mla_sm90(64, 1, 16), kFewPrograms}, Row{mla_sm90(16, 2, 0), kFewPrograms},
                                         Row{mla_sm90(16, 1, 64, DType::fp16), kFewPrograms}),
                         row_name);

INSTANTIATE_TEST_SUITE_P(GlobalPositions, DecodePrograms,
                         testing::Values(Row{at(shape(32, 8, 4, 16), 300, 280), kPositionPrograms},
                                         Row{at(shape(8, 1, 1, 0), 0, 20), kPositionPrograms},
                                         Row{at(shape(32, 8, 1, 64, 64), 3000, 2990), kPositionPrograms}),
                         row_name);

class Decode : public GpuTest {};

// The causal decode mask among Tq = 4 new tokens: the last token sees every key of its sequence,
// the first one the keys before the other three.
TEST_F(Decode, NewTokensAreCausalAmongThemselves) {
  const DecodeCase c(shape(32, 8, 4, 16));
  const Program p = test::load_decode_program(test::decode_program("causal"));
  const test::DecodeBindings bound(p, c);
  const test::ReferenceOutputs ref = c.reference(p, bound.env);
  for (int b = 0; b < c.B; ++b)
    for (int i = 0; i < c.Tq; ++i)
      ASSERT_EQ(ref.visible[static_cast<std::size_t>(b) * c.Hq * c.Tq + i], std::max(0, c.lens[b] - c.Tq + i + 1));
  DecodeOnGpu gpu(c);
  check_program(c, gpu, "causal");
}

// 40 new tokens (the decode kernel's: fewer than a chunk's) against block lists of 16-row query
// blocks: refused by name, before any launch.
TEST_F(Decode, ChunkPastOneQueryBlockOfBlockListsIsRefused) {
  DecodeShape s = test::prefill_chunk(shape(8, 2, 1, 16));
  s.Tq = 40;
  const DecodeCase c(s);
  const Program p = test::load_decode_program(test::decode_program("top_k_blocks"));
  const test::DecodeBindings bound(p, c);
  DecodeOnGpu gpu(c);
  try {
    gpu.run(decode_kernel(p, c.shape, Math::fast), bound);
    FAIL() << "Tq=40 against 16-row query blocks ran";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("decode against a KV cache with block lists needs every new token in "
                                             "one query block: Tq=40 is more than the 16 rows of a block of "
                                             "'selected'"));
  }
}

// A length below 0 or past what k and v hold gives that sequence NaN rows, out and lse; the
// others (one of them exactly as long as k and v) are right.
// The decode kernel (4 new tokens) and the chunk kernel (100) alike.
TEST_F(Decode, BadLengthsMakeTheirSequenceNaN) {
  for (int Tq : {4, 100}) {
    DecodeShape s = shape(32, 8, Tq, 0);
    s.lens = {137, 1000, 129, 300, 150};
    s.spare_keys = 0;  // Tkv = 1000: sequence 1 fills k and v
    const DecodeCase c(s);
    DecodeOnGpu gpu(c);
    std::vector<std::int32_t> lens = c.lens;
    lens[2] = -1;
    lens[3] = c.Tkv + 1;
    gpu.upload_indices(lens, c.table);
    for (const char* name : {"causal", "learned_sink"}) check_program(c, gpu, name, Math::fast, {2, 3});
  }
}

// A length past what a table row holds, or a page outside k and v among the entries a sequence
// reads, gives that sequence NaN rows; a bad entry past a length is never read. The decode kernel
// (4 new tokens) and the chunk kernel (100) alike.
// Sequences of 37, 1000, 129, 300 and 50 keys in pages of 64: sequence 1 longer than its pages
// hold, a page outside the pool in the middle of sequence 2 and in the unused part of sequence 4's
// table, -1 for sequence 3's last page; sequences 1-3 must come out NaN.
void check_bad_pages(DecodeShape s) {
  s.lens = {37, 1000, 129, 300, 50};
  const DecodeCase c(s);
  DecodeOnGpu gpu(c);
  std::vector<std::int32_t> lens = c.lens, table = c.table;
  const auto entry = [&](int b, int p) -> std::int32_t& { return table[static_cast<std::size_t>(b) * c.max_pages + p]; };
  lens[1] = c.max_pages * c.page_size + 1;
  entry(2, 1) = c.num_pages;  // keys 64..127 of 129
  entry(3, 4) = -1;           // keys 256..299 of 300: the last page read
  entry(4, 1) = c.num_pages;  // past the 50 keys of sequence 4
  gpu.upload_indices(lens, table);
  for (const char* name : {"causal", "learned_sink"}) check_program(c, gpu, name, Math::fast, {1, 2, 3});
}

TEST_F(Decode, BadPagesMakeTheirSequenceNaN) {
  for (int Tq : {4, 100}) check_bad_pages(shape(32, 8, Tq, 64));
}

// A bad length or page makes NaN rows of its own sequence only (the absorbed form, v in k's rows);
// one sequence of 65536 keys is split across CTAs and merged by decode_combine over v's 512 columns.
void check_mla_bad_values_and_splits(const DecodeShape& shape) {
  check_bad_pages(shape);
  DecodeShape s = shape;
  s.lens = {65536};
  const DecodeCase c(s);
  DecodeOnGpu gpu(c);
  for (const char* name : {"causal", "learned_sink"}) check_program(c, gpu, name);
}
TEST_F(Decode, MlaBadValuesAndSplits) { check_mla_bad_values_and_splits(mla(16, 1, 64)); }
TEST_F(Decode, HopperMlaBadValuesAndSplits) {
  if (jit::device_arch(0) != "sm_90a") GTEST_SKIP() << "sm90_mla runs on sm_90a only";
  check_mla_bad_values_and_splits(mla_sm90(16, 1, 64));
}

// B = 64 short sequences, four of them shorter than Tq (rows that see no key in the middle of a
// sequence).
TEST_F(Decode, ManyShortSequences) {
  DecodeShape s = shape(32, 8, 4, 16);
  std::mt19937 rng(64);
  std::uniform_int_distribution<int> length(0, 200);
  s.lens.clear();
  for (int b = 0; b < 64; ++b) s.lens.push_back(b < 4 ? b : length(rng));
  const DecodeCase c(s);
  DecodeOnGpu gpu(c);
  for (const test::DecodeProgram& p : test::kDecodePrograms)
    if (std::string(p.name) != "documents")  // reads doc_ids at q_idx + offsets[b] < 0 when lens[b] < Tq
      check_program(c, gpu, p.name);
}

// One sequence of 131072 keys, split across many CTAs (the window of learned_sink leaves most of
// the splits without a key).
TEST_F(Decode, OneLongSequence) {
  for (int page_size : {0, 256}) {
    DecodeShape s = shape(8, 1, 1, page_size);
    s.lens = {131072};
    const DecodeCase c(s);
    DecodeOnGpu gpu(c);
    for (const char* name : {"causal", "learned_sink", "softcap"}) check_program(c, gpu, name);
  }
}

// Any Tq: whole groups in a CTA with Hq = Hkv, a group of 8 query heads times 16 or 33 new tokens
// over several CTAs. Block lists need the new tokens within one query block (16 here).
TEST_F(Decode, AnyNumberOfNewTokens) {
  const struct {
    int Hq, Hkv, Tq;
  } shapes[] = {{4, 4, 2}, {8, 1, 16}, {8, 1, 33}};
  for (const auto& x : shapes) {
    const DecodeCase c(shape(x.Hq, x.Hkv, x.Tq, 64));
    DecodeOnGpu gpu(c);
    for (const char* name : {"causal", "learned_sink", "relative_position_bias"}) check_program(c, gpu, name);
    if (x.Tq <= 16) check_program(c, gpu, "top_k_blocks");
  }
}

TEST_F(Decode, TopKBlocksNeedTheNewTokensInOneQueryBlock) {
  const DecodeCase c(shape(8, 1, 17, 64));
  const Program p = test::load_decode_program(test::decode_program("top_k_blocks"));
  const test::DecodeBindings bound(p, c);
  DecodeOnGpu gpu(c);
  const Kernel kernel = decode_kernel(p, c.shape, Math::fast);
  try {
    gpu.run(kernel, bound);
    ADD_FAILURE() << "Tq = 17 with blocks of 16 queries ran";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), testing::AllOf(testing::HasSubstr("block"), testing::HasSubstr("Tq")));
  }
}

// kv_lens and page_table take any strides: lengths 3 apart, table rows 5 entries longer than
// max_pages, garbage in between. The decode kernel and the chunk kernel.
TEST_F(Decode, LengthsAndPagesTakeAnyStride) {
  for (const DecodeShape& s : {shape(32, 8, 4, 16), test::prefill_chunk(shape(8, 2, 1, 16))}) {
    const DecodeCase c(s);
    DecodeOnGpu gpu(c, {.lens_stride = 3, .table_row_pitch = c.max_pages + 5});
    for (const char* name : {"causal", "top_k_blocks"}) check_program(c, gpu, name);
  }
}

}  // namespace
}  // namespace flexjit::gpu_test

// Token-level top-k (TokenIndices) on CUDA: every forward call of such a program runs the decode
// kernel, one query token per CTA walking its sorted, de-duplicated list. Against the float64
// oracle: decode steps of 1 to 4 new tokens over shuffled pages of 16 and 64 keys and contiguous
// caches; plain forward calls (no kv_lens) of 1, 17 and 300 query rows against 1000 keys; lists
// of 1, 64 and 2048 entries with -1 slots, repeats and any order, per query head, per kv head and
// one for every head; GQA groups of 4 and 8, bf16 and fp16, head dims 64 and 128; a mask, a score
// mod, and the lists alone; MLA's head dims on the decode_mla kernel (576 / 512 with v in k's rows,
// 192 / 128). Then a bad entry: NaN in the rows of its CTA only.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "jit/cuda_driver.hpp"
#include "tests/gpu/decode_run.hpp"

namespace flexjit::gpu_test {
namespace {

using test::DecodeCase;
using test::DecodeShape;

// The new tokens' positions are q_idx + offsets[b] (tests/support/decode_case.hpp's decode
// programs); the list decides the candidates, the mods apply on top.
struct TokenProgram {
  const char* name;
  const char* source;
};
const TokenProgram kPrograms[] = {
    {"token_causal", R"(
selected: TokenIndices
offsets: Tensor[int32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"token_softcap_distance", R"(
selected: TokenIndices
offsets: Tensor[int32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    s = score - 0.002 * (h + 1) * (q_idx + offsets[b] - kv_idx)
    return 30.0 * torch.tanh(s / 30.0)
)"},
    {"token_lists_alone", R"(
selected: TokenIndices
def score_mod(score, b, h, q_idx, kv_idx):
    return score
)"},
};

Program token_program(const std::string& name) {
  if (name == "token_topk_causal") {  // the CLI's example: q_idx >= kv_idx, rows and keys from 0
    // Named by its path in the source tree, so that the kernel cache key is the same everywhere.
    const std::string path = "tests/cli/programs/token_topk_causal.py";
    const char* root = std::getenv("FLEXJIT_SOURCE_DIR");  // as gpu_support's load_program reads it
    std::ifstream in(std::string(root != nullptr ? root : FLEXJIT_SOURCE_DIR) + "/" + path);
    std::stringstream text;
    text << in.rdbuf();
    return Program::from_source(text.str(), path);
  }
  for (const TokenProgram& p : kPrograms)
    if (name == p.name) return Program::from_source(p.source, std::string(p.name) + ".py");
  throw std::runtime_error("no token program " + name);
}

enum class ListHeads { query, kv, one };
const char* heads_name(ListHeads h) { return h == ListHeads::query ? "Hq" : h == ListHeads::kv ? "Hkv" : "H1"; }

// Lists int32 [B, H, Tq, K] of keys within each sequence: in half the rows the new token's own
// position and the row's index first, then -1 slots, repeats of earlier entries and random keys,
// unsorted.
struct TokenLists {
  std::vector<std::int64_t> shape;
  std::vector<std::int32_t> values;

  TokenLists(const DecodeCase& c, ListHeads heads, int K, unsigned seed) {
    const int H = heads == ListHeads::query ? c.Hq : heads == ListHeads::kv ? c.Hkv : 1;
    shape = {c.B, H, c.Tq, K};
    std::mt19937 rng(seed);
    values.reserve(static_cast<std::size_t>(c.B) * H * c.Tq * K);
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < H; ++h)
        for (int q = 0; q < c.Tq; ++q) {
          const int len = std::max(0, c.lens[b]);
          const std::size_t row = values.size();
          const bool own = rng() % 2 == 0;
          for (int k = 0; k < K; ++k) {
            const unsigned r = rng() % 10;
            std::int32_t key;
            if (len == 0) key = -1;
            else if (own && k == 0) key = std::clamp(len - c.Tq + q, 0, len - 1);
            else if (own && k == 1) key = std::min(q, len - 1);
            else if (r < 2) key = -1;
            else if (r < 4 && k > 0) key = values[row + rng() % k];
            else key = static_cast<std::int32_t>(rng() % len);
            values.push_back(key);
          }
        }
  }
  std::int32_t& at(int b, int h, int q, int k) {
    return values[((static_cast<std::size_t>(b) * shape[1] + h) * shape[2] + q) * shape[3] + k];
  }
  void bind(test::DecodeBindings& bound) const {
    bound.bind["selected"] = TensorView::contiguous(values.data(), i32, shape, Device::cpu());
    bound.env.tensors["selected"] = ir::TensorBinding{ir::DType::Int32, shape, {}, values.data()};
  }
};

test::DecodeTolerance tolerance(DType d) {
  return {.out_rel_l2 = d == DType::bf16 ? 2e-2 : 5e-3,
          .lse_rel_l2 = std::numeric_limits<double>::infinity(),
          .lse_max_abs = 1e-2};
}

struct Row {
  DecodeShape shape;
  int K;
  ListHeads heads;
  bool plain = false;  // a plain forward call: no kv_lens, every sequence Tkv keys
  std::vector<std::string> programs{"token_causal", "token_softcap_distance", "token_lists_alone"};
};

std::string row_name(const Row& r) {
  return fmt::format("{}_{}_d{}_K{}_{}{}", test::decode_layout_name(r.shape), dtype_name(r.shape.dtype), r.shape.D, r.K,
                     heads_name(r.heads), r.plain ? "_plain" : "");
}
void PrintTo(const Row& r, std::ostream* os) { *os << row_name(r); }

DecodeShape decode_shape(int Hq, int Hkv, int Tq, int page_size, int D, DType dtype) {
  return {.Hq = Hq, .Hkv = Hkv, .Tq = Tq, .page_size = page_size, .D = D, .lens = {37, 0, 1000, 129, 3000},
          .dtype = dtype};
}
// Two sequences of 1000 keys in a contiguous k and v of exactly that many: a plain call's shape.
DecodeShape plain_shape(int Hq, int Hkv, int Tq, int D, DType dtype) {
  return {.Hq = Hq, .Hkv = Hkv, .Tq = Tq, .page_size = 0, .D = D, .lens = {1000, 1000}, .dtype = dtype,
          .spare_keys = 0};
}

// MLA's shapes: v of its own head dim (576 / 512 a view of k's first columns; 192 / 128 its own).
DecodeShape mla(DecodeShape s, int Dv, bool v_in_k) {
  s.Dv = Dv;
  s.v_in_k = v_in_k;
  return s;
}

// Chosen on their own (the decode family; where v has a head dim of its own sm90_mla at MLA's
// absorbed 576 / 512 on sm_90a, else decode_mla), or the shape's family where it names one.
Kernel compile(const Program& p, const DecodeShape& s) {
  return engine().compile(p, {.head_dim = s.D, .head_dim_v = s.Dv, .dtype = s.dtype, .family = s.family});
}
std::string family_of(const DecodeShape& s) {
  if (!s.family.empty()) return s.family;
  if (s.dv() == s.D) return "decode";
  return s.D == 576 && s.dv() == 512 && jit::device_arch(0) == "sm_90a" ? "sm90_mla" : "decode_mla";
}
DecodeShape on_decode_mla(DecodeShape s) {
  s.family = "decode_mla";
  return s;
}

class TokenListPrograms : public GpuTest, public testing::WithParamInterface<Row> {};

TEST_P(TokenListPrograms, MatchTheReference) {
  const Row& row = GetParam();
  const DecodeCase c(row.shape);
  DecodeOnGpu gpu(c, {.plain_call = row.plain});
  const TokenLists lists(c, row.heads, row.K, static_cast<unsigned>(row.K * 7 + row.shape.Tq));
  for (const std::string& name : row.programs) {
    const Program p = token_program(name);
    test::DecodeBindings bound(p, c);
    lists.bind(bound);
    const std::string what = fmt::format("{} {}", name, row_name(row));
    test::DecodeOutputs got;
    try {
      const Kernel kernel = compile(p, c.shape);
      EXPECT_EQ(kernel.family(), family_of(c.shape)) << what;
      got = gpu.run(kernel, bound);
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": " << e.what();
      continue;
    }
    const test::DecodeFigures f =
        test::expect_decode_matches(c, c.reference(p, bound.env), got, tolerance(c.shape.dtype), what);
    std::cout << fmt::format("[figures] {}: out_rel_l2={:.3e} lse_max_err={:.3e} keyless_rows={} finite_rows={}\n",
                             what, f.out_rel_l2, f.lse_max_abs, f.keyless_rows, f.finite_rows);
  }
}

// Decode steps against a cache: pages of 16 and 64 keys (shuffled) and contiguous, 1 to 4 new
// tokens, groups of 4 (32 / 8) and 8 (8 / 1).
INSTANTIATE_TEST_SUITE_P(
    Decode, TokenListPrograms,
    testing::Values(Row{decode_shape(32, 8, 1, 16, 128, DType::bf16), 64, ListHeads::kv},
                    Row{decode_shape(32, 8, 4, 64, 128, DType::bf16), 2048, ListHeads::query},
                    Row{decode_shape(32, 8, 3, 0, 64, DType::fp16), 1, ListHeads::one},
                    Row{decode_shape(32, 8, 2, 16, 64, DType::bf16), 64, ListHeads::one},
                    Row{decode_shape(8, 1, 4, 64, 128, DType::fp16), 2048, ListHeads::kv},
                    Row{decode_shape(32, 8, 1, 0, 128, DType::bf16), 2048, ListHeads::query},
                    // DeepSeek's sparse attention at MLA's head dims on decode_mla (named: sm_90a would
                    // choose sm90_mla, HopperMla below): the absorbed 576 / 512 over pages of 64 (16
                    // query heads a CTA), and 192 / 128 with v of its own, a list per query head over
                    // pages of 16.
                    Row{on_decode_mla(mla(decode_shape(16, 1, 1, 64, 576, DType::bf16), 512, true)), 2048,
                        ListHeads::kv},
                    Row{mla(decode_shape(64, 1, 2, 16, 192, DType::bf16), 128, false), 64, ListHeads::query}),
    [](const testing::TestParamInfo<Row>& info) { return row_name(info.param); });

// Plain forward calls (prefill with token lists): 1, 17 and 300 query rows against 1000 keys, and
// the CLI's example whose causal mask counts rows and keys from 0.
INSTANTIATE_TEST_SUITE_P(
    Plain, TokenListPrograms,
    testing::Values(Row{plain_shape(32, 8, 1, 128, DType::bf16), 2048, ListHeads::kv, true},
                    Row{plain_shape(32, 8, 17, 64, DType::fp16), 64, ListHeads::query, true},
                    Row{plain_shape(32, 8, 300, 128, DType::bf16), 64, ListHeads::one, true},
                    Row{plain_shape(8, 2, 300, 64, DType::bf16), 2048, ListHeads::kv, true},
                    Row{plain_shape(16, 4, 17, 128, DType::fp16), 1, ListHeads::kv, true},
                    Row{plain_shape(8, 2, 300, 64, DType::bf16), 64, ListHeads::query, true,
                        {"token_topk_causal", "token_softcap_distance"}},
                    // MLA's sparse prefill on decode_mla: 128 query heads of one token in two CTAs of 64.
                    Row{on_decode_mla(mla(plain_shape(128, 1, 17, 576, DType::bf16), 512, true)), 2048,
                        ListHeads::one, true},
                    // 70000 rows of one head, a CTA each: more CTAs than grid.y holds, folded into grid.x.
                    Row{plain_shape(1, 1, 70000, 64, DType::bf16), 8, ListHeads::query, true, {"token_lists_alone"}}),
    [](const testing::TestParamInfo<Row>& info) { return row_name(info.param); });

// DeepSeek's sparse attention at MLA's absorbed head dims, chosen on its own (sm90_mla on sm_90a,
// decode_mla elsewhere): a decode step over pages of 64 (16 query heads a CTA), one over pages of
// 16 with two new tokens and a list per query head (a CTA a row), and plain calls of 128 heads
// (two CTAs a token) with lists of 2048 and of 64 entries (more chunks than keys, and fewer).
INSTANTIATE_TEST_SUITE_P(
    HopperMla, TokenListPrograms,
    testing::Values(Row{mla(decode_shape(16, 1, 1, 64, 576, DType::bf16), 512, true), 2048, ListHeads::kv},
                    Row{mla(decode_shape(32, 1, 2, 16, 576, DType::fp16), 512, true), 64, ListHeads::query},
                    Row{mla(plain_shape(128, 1, 17, 576, DType::bf16), 512, true), 2048, ListHeads::one,
                        true},
                    Row{mla(plain_shape(128, 1, 300, 576, DType::bf16), 512, true), 64, ListHeads::one,
                        true, {"token_topk_causal", "token_softcap_distance"}}),
    [](const testing::TestParamInfo<Row>& info) { return row_name(info.param); });

// An entry below -1 or at or past its sequence's length makes NaN rows (out and lse) of its CTA
// only: the query heads of its kv head for that token, lists per kv head. Every other row is
// right. A decode step (lengths 200 and 150) and a plain call (1000 keys).
class TokenListEntries : public GpuTest {};

TEST_F(TokenListEntries, ABadEntryMakesItsCtasRowsNaN) {
  for (bool plain : {false, true}) {
    DecodeShape s = plain ? plain_shape(8, 2, 3, 64, DType::bf16) : decode_shape(8, 2, 3, 0, 64, DType::bf16);
    if (!plain) s.lens = {200, 150};
    const DecodeCase c(s);
    DecodeOnGpu gpu(c, {.plain_call = plain});
    const Program p = token_program("token_causal");
    TokenLists good(c, ListHeads::kv, 16, 5);
    TokenLists bad = good;
    bad.at(0, 1, 2, 5) = c.lens[0];  // past sequence 0's keys
    bad.at(1, 0, 0, 0) = -3;
    test::DecodeBindings bound(p, c), reference(p, c);
    bad.bind(bound);
    good.bind(reference);
    const test::ReferenceOutputs ref = c.reference(p, reference.env);
    const test::DecodeOutputs got = gpu.run(compile(p, c.shape), bound);
    const int group = c.Hq / c.Hkv;
    auto nan_row = [&](int b, int h, int q) { return (b == 0 && h / group == 1 && q == 2) || (b == 1 && h / group == 0 && q == 0); };
    int nan_rows = 0;
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < c.Hq; ++h)
        for (int q = 0; q < c.Tq; ++q) {
          const std::size_t r = (static_cast<std::size_t>(b) * c.Hq + h) * c.Tq + q;
          const std::string where = fmt::format("{} b={} h={} q={}", plain ? "plain" : "decode", b, h, q);
          if (nan_row(b, h, q)) {
            ++nan_rows;
            EXPECT_TRUE(std::isnan(got.lse[r])) << where;
            for (int d = 0; d < c.Dv; ++d) EXPECT_TRUE(std::isnan(got.out[r * c.Dv + d])) << where << " d=" << d;
            continue;
          }
          const double want_lse = ref.lse[r];
          if (std::isinf(want_lse)) EXPECT_EQ(got.lse[r], want_lse) << where;
          else EXPECT_NEAR(got.lse[r], want_lse, 1e-2) << where;
          double err = 0;
          for (int d = 0; d < c.Dv; ++d) err = std::max(err, std::abs(got.out[r * c.Dv + d] - ref.out[r * c.Dv + d]));
          EXPECT_LT(err, 5e-2) << where;
        }
    EXPECT_EQ(nan_rows, 2 * group);
  }
}

}  // namespace
}  // namespace flexjit::gpu_test

// Decode against a KV cache on a cpu kernel (ForwardOptions::kv_lens, page_table): paged and
// contiguous-with-lengths caches under every kind of mod, against the float64 reference of
// tests/support. The pages are shuffled, unused pages and the keys past each sequence's length
// hold NaN (a read of one would show), and the page-table entries past a length are garbage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "api/program_impl.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

constexpr int B = 4, D = 32;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Not multiples of any page size; one sequence is empty.
const std::vector<std::int32_t> kLengths = {37, 0, 300, 129};

std::vector<float> normal(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> x(n);
  for (float& e : x) e = dist(rng);
  return x;
}

// One decode step: q [B, Hq, Tq, D] and a cache holding kLengths[b] keys per sequence, paged
// (page_size > 0) or contiguous [B, Hkv, Tkv, D] with lengths (page_size 0).
struct DecodeCase {
  int Hq, Hkv, Tq, page_size;

  std::vector<std::int32_t> lens = kLengths;
  int max_pages = 0, num_pages = 0, Tkv = 0;
  std::vector<std::int32_t> table;
  std::vector<float> q, k, v, out, lse;
  // offsets[b]: the position of sequence b's first new token, kv_lens[b] - Tq (FlexAttention's
  // decode offsets; negative when a sequence is shorter than Tq).
  std::vector<std::int32_t> offsets;

  DecodeCase(int hq, int hkv, int tq, int ps) : Hq(hq), Hkv(hkv), Tq(tq), page_size(ps) {
    std::mt19937 rng(static_cast<unsigned>(hq * 1000 + hkv * 100 + tq * 10 + ps));
    q = normal(static_cast<std::size_t>(B) * Hq * Tq * D, rng);
    const int longest = *std::max_element(lens.begin(), lens.end());
    if (page_size > 0) {
      std::vector<int> pages_of(B);
      for (int b = 0; b < B; ++b) pages_of[b] = (lens[b] + page_size - 1) / page_size;
      max_pages = *std::max_element(pages_of.begin(), pages_of.end()) + 1;  // a spare column of garbage
      num_pages = std::accumulate(pages_of.begin(), pages_of.end(), 0) + 3;  // three pages nobody uses
      Tkv = max_pages * page_size;
      std::vector<std::int32_t> ids(static_cast<std::size_t>(num_pages));
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), rng);
      table.assign(static_cast<std::size_t>(B) * max_pages, 0);
      std::size_t next = 0;
      for (int b = 0; b < B; ++b)
        for (int p = 0; p < max_pages; ++p)
          table[static_cast<std::size_t>(b) * max_pages + p] = p < pages_of[b] ? ids[next++] : (p % 2 ? -7 : 1 << 30);
      const std::size_t pool = static_cast<std::size_t>(num_pages) * page_size * Hkv * D;
      k = std::vector<float>(pool, kNaN);
      v = std::vector<float>(pool, kNaN);
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < lens[b]; ++j)
          for (int g = 0; g < Hkv; ++g) {
            const std::size_t page = static_cast<std::size_t>(table[static_cast<std::size_t>(b) * max_pages + j / page_size]);
            const std::size_t at = ((page * page_size + j % page_size) * Hkv + g) * D;
            const std::vector<float> kr = normal(D, rng), vr = normal(D, rng);
            std::copy(kr.begin(), kr.end(), k.begin() + static_cast<std::ptrdiff_t>(at));
            std::copy(vr.begin(), vr.end(), v.begin() + static_cast<std::ptrdiff_t>(at));
          }
    } else {
      Tkv = longest + 5;
      const std::size_t n = static_cast<std::size_t>(B) * Hkv * Tkv * D;
      k = normal(n, rng);
      v = normal(n, rng);
      for (int b = 0; b < B; ++b)
        for (int g = 0; g < Hkv; ++g)
          for (int j = lens[b]; j < Tkv; ++j) {
            const std::size_t at = ((static_cast<std::size_t>(b) * Hkv + g) * Tkv + j) * D;
            std::fill_n(k.begin() + static_cast<std::ptrdiff_t>(at), D, kNaN);
            std::fill_n(v.begin() + static_cast<std::ptrdiff_t>(at), D, kNaN);
          }
    }
    out.assign(q.size(), -1.f);
    lse.assign(static_cast<std::size_t>(B) * Hq * Tq, -1.f);
    for (int b = 0; b < B; ++b) offsets.push_back(lens[b] - Tq);
  }

  std::vector<std::int64_t> kv_shape() const {
    if (page_size > 0) return {num_pages, page_size, Hkv, D};
    return {B, Hkv, Tkv, D};
  }
  ForwardOptions options(std::map<std::string, Binding> bind) {
    ForwardOptions o{.lse = TensorView::contiguous(lse.data(), f32, {B, Hq, Tq}, Device::cpu()), .bind = std::move(bind)};
    o.kv_lens = TensorView::contiguous(lens.data(), i32, {B}, Device::cpu());
    if (page_size > 0) o.page_table = TensorView::contiguous(table.data(), i32, {B, max_pages}, Device::cpu());
    return o;
  }
  void forward(const Kernel& kernel, const ForwardOptions& o) {
    kernel.forward(TensorView::contiguous(q.data(), f32, {B, Hq, Tq, D}, Device::cpu()),
                   TensorView::contiguous(k.data(), f32, kv_shape(), Device::cpu()),
                   TensorView::contiguous(v.data(), f32, kv_shape(), Device::cpu()),
                   TensorView::contiguous(out.data(), f32, {B, Hq, Tq, D}, Device::cpu()), o);
  }
  ReferenceOutputs reference(const Program& p, const ir::Env& env) const {
    ReferenceInputs in{q.data(), k.data(), v.data(), B, Hq, Hkv, Tq, Tkv, D};
    in.scale = 1.0 / std::sqrt(static_cast<double>(D));
    in.env = &env;
    in.kv_lens = lens.data();
    if (page_size > 0) in.page_table = table.data(), in.page_size = page_size, in.max_pages = max_pages;
    return reference_attention(detail::ProgramAccess::impl(p).ir, in);
  }
};

// Decode programs: each reads the new tokens' absolute positions, q_idx + offsets[b].
struct DecodeProgram {
  const char* name;
  const char* source;
};

const DecodeProgram kPrograms[] = {
    {"causal", R"(
offsets: Tensor[int32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"every_key", R"(
def score_mod(score, b, h, q_idx, kv_idx):
    return score
)"},
    {"sliding_window", R"(
offsets: Tensor[int32, 1]
window: int
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & (pos - kv_idx < window)
)"},
    {"window_with_sink_tokens", R"(
offsets: Tensor[int32, 1]
window: int
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & ((pos - kv_idx < window) | (kv_idx < 4))
)"},
    {"learned_sink", R"(
offsets: Tensor[int32, 1]
window: int
sinks: Tensor[float32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & (pos - kv_idx < window)
def sink(b, h):
    return sinks[h]
)"},
    {"alibi", R"(
offsets: Tensor[int32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    slope = 2.0 ** (-8.0 * (h + 1) / 32)
    return score - slope * (q_idx + offsets[b] - kv_idx)
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"softcap", R"(
offsets: Tensor[int32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return 2.0 * torch.tanh(score / 2.0)
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"documents", R"(
offsets: Tensor[int32, 1]
doc_ids: Tensor[int32, 2]
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (doc_ids[b, pos] == doc_ids[b, kv_idx]) & (pos >= kv_idx)
)"},
    {"top_k_blocks", R"(
offsets: Tensor[int32, 1]
selected: BlockIndices[16, 16]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
};

// What a program's declarations get: the same values for the kernel and for the reference.
struct Bound {
  std::vector<std::int32_t> doc_ids, selected;
  std::vector<float> sinks;
  std::int64_t window = 50;
  std::map<std::string, Binding> bind;
  ir::Env env;

  Bound(const Program& p, DecodeCase& c) {
    std::mt19937 rng(7);
    const int longest = *std::max_element(c.lens.begin(), c.lens.end());
    auto tensor = [&](const std::string& name, const void* data, ir::DType dtype, DType api_dtype,
                      std::vector<std::int64_t> shape) {
      bind[name] = TensorView::contiguous(data, api_dtype, shape, Device::cpu());
      env.tensors[name] = ir::TensorBinding{dtype, std::move(shape), {}, data};
    };
    for (const Parameter& x : p.parameters()) {
      if (x.name == "offsets") tensor("offsets", c.offsets.data(), ir::DType::Int32, i32, {B});
      if (x.name == "window") {
        bind["window"] = window;
        env.scalars["window"] = ir::Value::integer(window);
      }
      if (x.name == "sinks") {
        sinks = normal(static_cast<std::size_t>(c.Hq), rng);
        tensor("sinks", sinks.data(), ir::DType::Float32, f32, {c.Hq});
      }
      if (x.name == "doc_ids") {  // runs of 1 to 60 tokens per sequence
        doc_ids.assign(static_cast<std::size_t>(B) * longest, 0);
        std::uniform_int_distribution<int> run(1, 60);
        for (int b = 0; b < B; ++b)
          for (int j = 0, id = 0, left = run(rng); j < longest; ++j, --left) {
            if (left == 0) ++id, left = run(rng);
            doc_ids[static_cast<std::size_t>(b) * longest + j] = id;
          }
        tensor("doc_ids", doc_ids.data(), ir::DType::Int32, i32, {B, longest});
      }
      if (x.name == "selected") {  // [B, Hkv, 1, 3]: two blocks of each sequence's own, or -1
        selected.clear();
        for (int b = 0; b < B; ++b)
          for (int g = 0; g < c.Hkv; ++g) {
            const int blocks = (c.lens[b] + 15) / 16;
            std::uniform_int_distribution<int> pick(0, std::max(0, blocks - 1));
            selected.push_back(blocks > 0 ? blocks - 1 : -1);  // the newest keys
            selected.push_back(blocks > 0 ? pick(rng) : -1);
            selected.push_back(-1);
          }
        tensor("selected", selected.data(), ir::DType::Int32, i32, {B, c.Hkv, 1, 3});
      }
    }
  }
};

// out and lse against the reference: rows without keys exactly (out 0, lse -inf or the sink),
// the rest by relative L2 error.
void expect_matches(const DecodeCase& c, const ReferenceOutputs& ref, const std::string& what) {
  std::vector<float> lse_finite;
  std::vector<double> ref_finite;
  for (std::size_t r = 0; r < ref.lse.size(); ++r) {
    if (std::isinf(ref.lse[r])) {
      EXPECT_EQ(c.lse[r], -std::numeric_limits<float>::infinity()) << what << " row " << r;
    } else {
      lse_finite.push_back(c.lse[r]);
      ref_finite.push_back(ref.lse[r]);
    }
  }
  EXPECT_FALSE(ref_finite.empty()) << what;
  EXPECT_LT(relative_l2(lse_finite, ref_finite), 1e-6) << what;
  EXPECT_LT(relative_l2(c.out, ref.out), 1e-5) << what;
  // The empty sequence (b = 1): out is 0 in every row.
  for (std::size_t e = 0; e < static_cast<std::size_t>(c.Hq) * c.Tq * D; ++e)
    ASSERT_EQ(c.out[static_cast<std::size_t>(c.Hq) * c.Tq * D + e], 0.f) << what;
}

struct Layout {
  int Hq, Hkv, Tq, page_size;
};

std::string layout_name(const testing::TestParamInfo<Layout>& info) {
  const Layout& l = info.param;
  return "Hq" + std::to_string(l.Hq) + "_Hkv" + std::to_string(l.Hkv) + "_Tq" + std::to_string(l.Tq) +
         (l.page_size ? "_page" + std::to_string(l.page_size) : "_contiguous");
}

class KvCache : public testing::TestWithParam<Layout> {};

TEST_P(KvCache, EveryProgramMatchesTheReference) {
  const Layout& l = GetParam();
  for (const DecodeProgram& dp : kPrograms) {
    const Program p = Program::from_source(dp.source, std::string(dp.name) + ".py");
    const Kernel kernel = engine().compile(p, {.head_dim = D, .dtype = f32, .device = Device::cpu()});
    DecodeCase c(l.Hq, l.Hkv, l.Tq, l.page_size);
    Bound bound(p, c);
    c.forward(kernel, c.options(bound.bind));
    expect_matches(c, c.reference(p, bound.env), dp.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Decode, KvCache,
                         testing::Values(Layout{32, 8, 1, 16}, Layout{32, 8, 4, 16}, Layout{32, 8, 1, 64},
                                         Layout{32, 8, 4, 64}, Layout{32, 8, 4, 256}, Layout{8, 1, 1, 256},
                                         Layout{8, 1, 4, 64}, Layout{32, 8, 4, 0}, Layout{8, 1, 1, 0}),
                         layout_name);

// The causal decode mask among Tq = 4 new tokens: the last token sees every key of its sequence,
// the first one the keys before the other three.
TEST(KvCacheDecode, NewTokensAreCausalAmongThemselves) {
  const Program p = Program::from_source(kPrograms[0].source, "causal.py");
  DecodeCase c(8, 2, 4, 16);
  Bound bound(p, c);
  const Kernel kernel = engine().compile(p, {.head_dim = D, .dtype = f32, .device = Device::cpu()});
  c.forward(kernel, c.options(bound.bind));
  const ReferenceOutputs ref = c.reference(p, bound.env);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < c.Tq; ++i)
      EXPECT_EQ(ref.visible[static_cast<std::size_t>(b) * c.Hq * c.Tq + i], std::max(0, c.lens[b] - c.Tq + i + 1));
  expect_matches(c, ref, "causal");
}

// The interpreter (the executable spec) runs the same paged call as the LLVM code.
TEST(KvCacheDecode, InterpreterMatchesTheReference) {
  const Program p = Program::from_source(kPrograms[4].source, "learned_sink.py");
  DecodeCase c(8, 2, 4, 16);
  Bound bound(p, c);
  const Kernel kernel =
      engine().compile(p, {.head_dim = D, .dtype = f32, .device = Device::cpu(), .cpu_backend = CpuBackend::interpreter});
  c.forward(kernel, c.options(bound.bind));
  const ReferenceOutputs ref = c.reference(p, bound.env);
  expect_matches(c, ref, "learned_sink");
  // With a sink, the empty sequence's rows have lse = the sink.
  for (int h = 0; h < c.Hq; ++h)
    EXPECT_EQ(c.lse[static_cast<std::size_t>(1 * c.Hq + h) * c.Tq], bound.sinks[static_cast<std::size_t>(h)]);
}

// bf16 pages: converted like any input, the same result as f32 pages holding the rounded values.
TEST(KvCacheDecode, Bf16PagesMatchTheRoundedF32Run) {
  const Program p = Program::from_source(kPrograms[0].source, "causal.py");
  DecodeCase c(8, 2, 1, 64);
  for (std::vector<float>* x : {&c.q, &c.k, &c.v})
    for (float& e : *x) e = bf16_bits_to_float(float_to_bf16_bits(e));
  const auto bits = [](const std::vector<float>& x) {
    std::vector<std::uint16_t> out;
    for (float e : x) out.push_back(float_to_bf16_bits(e));
    return out;
  };
  const std::vector<std::uint16_t> q = bits(c.q), k = bits(c.k), v = bits(c.v);
  std::vector<std::uint16_t> out(c.q.size());
  Bound bound(p, c);
  const Kernel kernel = engine().compile(p, {.head_dim = D, .dtype = bf16, .device = Device::cpu()});
  kernel.forward(TensorView::contiguous(q.data(), bf16, {B, c.Hq, c.Tq, D}, Device::cpu()),
                 TensorView::contiguous(k.data(), bf16, c.kv_shape(), Device::cpu()),
                 TensorView::contiguous(v.data(), bf16, c.kv_shape(), Device::cpu()),
                 TensorView::contiguous(out.data(), bf16, {B, c.Hq, c.Tq, D}, Device::cpu()), c.options(bound.bind));
  const ReferenceOutputs ref = c.reference(p, bound.env);
  std::vector<float> got;
  for (std::uint16_t e : out) got.push_back(bf16_bits_to_float(e));
  EXPECT_LT(relative_l2(got, ref.out), 1e-2);
}

}  // namespace
}  // namespace flexjit::test

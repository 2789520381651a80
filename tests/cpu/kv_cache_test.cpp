// cpu_attention_forward with a KV cache (kv_lens, page_table): keys read through a shuffled page
// table give the bits the same keys give laid out contiguously, on both back ends; a length equal
// to Tkv is the call without lengths; block lists and the back end's own checks speak of each
// sequence's length.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "cpu/attention.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using cpu::CpuBackend;

constexpr int B = 3, Hq = 6, Hkv = 2, Tq = 3, D = 24, kPageSize = 16;
const std::vector<std::int32_t> kLengths = {50, 0, 33};  // Tkv = 50: the first one is full
constexpr int kTkv = 50, kMaxPages = 4;                 // 4 pages of 16 hold 64 keys

const char* kProgram = R"(
offsets: Tensor[int32, 1]
window: int
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & ((pos - kv_idx < window) | (kv_idx < 2))
def score_mod(score, b, h, q_idx, kv_idx):
    return 3.0 * torch.tanh(score / 3.0) - 0.01 * h * (q_idx + offsets[b] - kv_idx)
)";

struct Cache {
  std::vector<float> q, k, v, k_pages, v_pages;
  std::vector<std::int32_t> lens = kLengths, table, offsets;
  int num_pages = 0;
  ir::Env env;

  Cache() {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.f, 1.f);
    auto fill = [&](std::vector<float>& x, std::size_t n) {
      x.resize(n);
      for (float& e : x) e = normal(rng);
    };
    fill(q, std::size_t{B} * Hq * Tq * D);
    fill(k, std::size_t{B} * Hkv * kTkv * D);
    fill(v, k.size());
    // Each sequence's keys copied into shuffled pages; the rest of the pool, and the keys past each
    // length in k and v, NaN.
    for (std::int32_t n : lens) num_pages += (n + kPageSize - 1) / kPageSize;
    num_pages += 2;
    std::vector<std::int32_t> ids(static_cast<std::size_t>(num_pages));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    k_pages.assign(static_cast<std::size_t>(num_pages) * kPageSize * Hkv * D, nan);
    v_pages.assign(k_pages.size(), nan);
    table.assign(std::size_t{B} * kMaxPages, -1);
    std::size_t next = 0;
    for (int b = 0; b < B; ++b) {
      for (int p = 0; p * kPageSize < lens[b]; ++p) table[static_cast<std::size_t>(b) * kMaxPages + p] = ids[next++];
      for (int g = 0; g < Hkv; ++g)
        for (int j = 0; j < kTkv; ++j) {
          const std::size_t from = ((static_cast<std::size_t>(b) * Hkv + g) * kTkv + j) * D;
          if (j >= lens[b]) {
            std::fill_n(k.begin() + static_cast<std::ptrdiff_t>(from), D, nan);
            std::fill_n(v.begin() + static_cast<std::ptrdiff_t>(from), D, nan);
            continue;
          }
          const std::size_t page = static_cast<std::size_t>(table[static_cast<std::size_t>(b) * kMaxPages + j / kPageSize]);
          const std::size_t to = ((page * kPageSize + j % kPageSize) * Hkv + g) * D;
          std::copy_n(k.begin() + static_cast<std::ptrdiff_t>(from), D, k_pages.begin() + static_cast<std::ptrdiff_t>(to));
          std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(from), D, v_pages.begin() + static_cast<std::ptrdiff_t>(to));
        }
    }
    for (std::int32_t n : lens) offsets.push_back(n - Tq);
    env.tensors["offsets"] = ir::TensorBinding{ir::DType::Int32, {B}, {}, offsets.data()};
    env.scalars["window"] = ir::Value::integer(20);
  }

  cpu::CpuAttentionInputs contiguous() const {
    cpu::CpuAttentionInputs in{q.data(), k.data(), v.data(), B, Hq, Hkv, Tq, kTkv, D};
    in.bindings = &env;
    in.kv_lens = lens.data();
    return in;
  }
  cpu::CpuAttentionInputs paged() const {
    cpu::CpuAttentionInputs in{q.data(), k_pages.data(), v_pages.data(), B, Hq, Hkv, Tq, kMaxPages * kPageSize, D};
    in.bindings = &env;
    in.kv_lens = lens.data();
    in.page_table = table.data();
    in.page_size = kPageSize, in.max_pages = kMaxPages, in.num_pages = num_pages;
    return in;
  }
};

struct Result {
  std::vector<float> out = std::vector<float>(std::size_t{B} * Hq * Tq * D, -1.f);
  std::vector<float> lse = std::vector<float>(std::size_t{B} * Hq * Tq, -1.f);
};

Result run(const ir::Program& p, const cpu::CpuAttentionInputs& in, CpuBackend backend) {
  Result r;
  cpu::cpu_attention_forward(p, in, r.out.data(), r.lse.data(), backend);
  return r;
}

// Equal as bits, so that NaN and -inf compare too.
void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(std::memcmp(&a[i], &b[i], 4), 0) << i << ": " << a[i] << " vs " << b[i];
}

ir::Program program() { return compiler::build_ir(dsl::SourceFile("decode.py", kProgram)); }

TEST(CpuKvCache, PagedKeysGiveTheBitsOfContiguousOnes) {
  const Cache c;
  const ir::Program p = program();
  std::vector<CpuBackend> backends = {CpuBackend::Interpreter};
  if (cpu::llvm_backend_available()) backends.push_back(CpuBackend::Llvm);
  for (CpuBackend backend : backends) {
    const Result dense = run(p, c.contiguous(), backend), paged = run(p, c.paged(), backend);
    expect_same_bits(paged.out, dense.out);
    expect_same_bits(paged.lse, dense.lse);
    for (float x : dense.out) ASSERT_FALSE(std::isnan(x));  // no key past a length was read
    EXPECT_EQ(dense.lse[std::size_t{Hq} * Tq], -std::numeric_limits<float>::infinity());  // the empty sequence
  }
}

TEST(CpuKvCache, AFullLengthIsTheCallWithoutLengths) {
  const Cache c;
  const ir::Program p = program();
  cpu::CpuAttentionInputs with = c.contiguous(), without = c.contiguous();
  without.kv_lens = nullptr;  // sequence 0 has Tkv keys either way
  const Result a = run(p, with, CpuBackend::Auto), b = run(p, without, CpuBackend::Auto);
  const std::size_t first = std::size_t{Hq} * Tq * D;  // sequence 0 only: the others hold NaN past their lengths
  expect_same_bits(std::vector<float>(a.out.begin(), a.out.begin() + static_cast<std::ptrdiff_t>(first)),
                   std::vector<float>(b.out.begin(), b.out.begin() + static_cast<std::ptrdiff_t>(first)));
}

std::string error_of(const ir::Program& p, const cpu::CpuAttentionInputs& in) {
  try {
    run(p, in, CpuBackend::Interpreter);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(CpuKvCache, BlockListsNameBlocksOfTheSequence) {
  const ir::Program p = compiler::build_ir(dsl::SourceFile("topk.py", R"(
selected: BlockIndices[16, 16]
def mask_mod(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx + 40
)"));
  Cache c;
  // Sequence 0 has 50 keys (blocks 0..3), sequence 1 none, sequence 2 has 33 (blocks 0..2).
  // [B, Hkv, 1 query block, 2]
  std::vector<std::int32_t> list = {3, 0, 3, 0, -1, -1, -1, -1, 2, 1, 2, 1};
  c.env.tensors["selected"] = ir::TensorBinding{ir::DType::Int32, {B, Hkv, 1, 2}, {}, list.data()};
  EXPECT_EQ(error_of(p, c.paged()), "");
  list[9] = 3;
  EXPECT_EQ(error_of(p, c.paged()), "block indices 'selected': entry [2, 0, 0, 1] = 3 is not a kv block (0..2) or -1");
  list[9] = 1, list[4] = 0;
  EXPECT_EQ(error_of(p, c.contiguous()), "block indices 'selected': entry [1, 0, 0, 0] = 0 is not -1 (sequence 1 has no keys)");
}

TEST(CpuKvCache, LengthsAndPagesAreChecked) {
  Cache c;
  c.table[4] = c.num_pages;  // sequence 1 reads no page: never looked at
  EXPECT_EQ(error_of(program(), c.paged()), "");
  c.table[8] = c.num_pages;  // sequence 2's first page
  EXPECT_EQ(error_of(program(), c.paged()), "cpu_attention_forward: page_table[2, 0] = " + std::to_string(c.num_pages) +
                                                " is not a page (0.." + std::to_string(c.num_pages - 1) + ")");
  Cache d;
  d.lens[1] = kTkv + 1;
  EXPECT_EQ(error_of(program(), d.contiguous()), "cpu_attention_forward: kv_lens[1] = 51 is not in [0, 50]");
  cpu::CpuAttentionInputs no_lengths = d.paged();
  no_lengths.kv_lens = nullptr;
  EXPECT_EQ(error_of(program(), no_lengths), "cpu_attention_forward: a page table needs kv_lens");
}

}  // namespace

// The checks of a KV cache (ForwardOptions::kv_lens, page_table): every problem named, with its
// exact message, before anything runs; and the refusal of CUDA kernels, which take none yet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

constexpr int B = 3, Hq = 4, Hkv = 2, Tq = 2, D = 16, kPageSize = 16, kPages = 6, kMaxPages = 3;
const std::string kName = "flexjit_cpu_causal_d16_f32";

// A valid paged call: sequences of 20, 0 and 33 keys in pages of 16 (two, none and three
// pages), the table's unread entries holding garbage.
struct PagedCall {
  std::vector<float> q = std::vector<float>(std::size_t{B} * Hq * Tq * D, 0.5f);
  std::vector<float> kv = std::vector<float>(std::size_t{kPages} * kPageSize * Hkv * D, 0.25f);
  std::vector<float> out = std::vector<float>(q.size(), -1.f);
  std::vector<std::int32_t> lens = {20, 0, 33};
  std::vector<std::int32_t> table = {4, 0, -1, 99, 99, 99, 1, 5, 2};
  TensorView k = TensorView::contiguous(kv.data(), f32, {kPages, kPageSize, Hkv, D}, Device::cpu());
  TensorView v = k;
  ForwardOptions options{};

  PagedCall() {
    options.kv_lens = TensorView::contiguous(lens.data(), i32, {B}, Device::cpu());
    options.page_table = TensorView::contiguous(table.data(), i32, {B, kMaxPages}, Device::cpu());
  }
  // The error message of the call ("" when it runs).
  std::string error() {
    const Kernel kernel = engine().compile(example("causal"), {.head_dim = D, .dtype = f32, .device = Device::cpu()});
    return error_of([&] {
      kernel.forward(TensorView::contiguous(q.data(), f32, {B, Hq, Tq, D}, Device::cpu()), k, v,
                     TensorView::contiguous(out.data(), f32, {B, Hq, Tq, D}, Device::cpu()), options);
    });
  }
};

TEST(KvCacheChecks, AValidCallRunsAndReadsNoUnusedEntry) {
  PagedCall c;
  EXPECT_EQ(c.error(), "");
  // Equal keys and values everywhere: each row that sees a key averages values of 0.25.
  EXPECT_EQ(c.out[0], 0.25f);
  EXPECT_EQ(c.out[std::size_t{Hq} * Tq * D], 0.f);  // sequence 1 has no keys
}

TEST(KvCacheChecks, EachProblemHasItsMessage) {
  const struct {
    const char* what;
    void (*breaks)(PagedCall&);
    std::string message;
  } cases[] = {
      {"no lengths", [](PagedCall& c) { c.options.kv_lens.reset(); },
       "page_table: needs kv_lens, the number of keys of each sequence"},
      {"int64 lengths", [](PagedCall& c) { c.options.kv_lens->dtype = i64; }, "kv_lens: dtype must be i32, got i64"},
      {"lengths of rank 2", [](PagedCall& c) { c.options.kv_lens->shape = {B, 1}; },
       "kv_lens: expected 1 dim [B], got [3, 1]"},
      {"lengths of another batch", [](PagedCall& c) { c.options.kv_lens->shape = {2}; },
       "q and kv_lens: batch size B 3 vs 2"},
      {"lengths on the GPU", [](PagedCall& c) { c.options.kv_lens->device = Device::cuda(0); },
       "kv_lens: is on cuda:0, but the kernel runs on the cpu and needs host memory"},
      {"a table of rank 1", [](PagedCall& c) { c.options.page_table->shape = {B * kMaxPages}; },
       "page_table: expected 2 dims [B, max_pages_per_seq], got [9]"},
      {"a table of another batch", [](PagedCall& c) { c.options.page_table->shape = {1, kMaxPages}; },
       "q and page_table: batch size B 3 vs 1"},
      {"a table without columns", [](PagedCall& c) { c.options.page_table->shape = {B, 0}; },
       "page_table: max_pages_per_seq must be >= 1, got 0"},
      {"a table longer than a sequence can be", [](PagedCall& c) { c.options.page_table->shape = {B, 200000000}; },
       "page_table: max_pages_per_seq 200000000 of 16 keys each is more than 2147483647 keys"},
      {"a float table", [](PagedCall& c) { c.options.page_table->dtype = f32; },
       "page_table: dtype must be i32, got f32"},
      {"a negative length", [](PagedCall& c) { c.lens[1] = -1; }, "kv_lens[1] = -1 is negative"},
      {"a length past the table", [](PagedCall& c) { c.lens[0] = 49; },
       "kv_lens[0] = 49 is more than a page table row holds (3 pages of 16 = 48 keys)"},
      {"a page out of range", [](PagedCall& c) { c.table[7] = 6; },
       "page_table[2, 1] = 6 is not a page of k and v (0..5)"},
      {"a negative page", [](PagedCall& c) { c.table[0] = -1; },
       "page_table[0, 0] = -1 is not a page of k and v (0..5)"},
      {"a page size of 8", [](PagedCall& c) { c.k.shape = c.v.shape = {kPages * 2, 8, Hkv, D}; },
       "k: page_size 8 is not a multiple of 16 in [16, 256]"},
      {"pages of 512", [](PagedCall& c) { c.k.shape = c.v.shape = {kPages / 2, 512, Hkv, D}; },
       "k: page_size 512 is not a multiple of 16 in [16, 256]"},
      {"pages of another shape", [](PagedCall& c) { c.v.shape = {kPages, kPageSize, Hkv / 2, D * 2}; },
       "v: expected the shape of k [6, 16, 2, 16], got [6, 16, 1, 32]"},
      {"dense k and v with a table", [](PagedCall& c) { c.k.shape = c.v.shape = {kPages, kPageSize, Hkv}; },
       "k: expected 4 dims [num_pages, page_size, Hkv, D], got [6, 16, 2]"},
  };
  for (const auto& x : cases) {
    PagedCall c;
    x.breaks(c);
    const std::string e = c.error();
    EXPECT_THAT(e, HasSubstr(x.message)) << x.what;
    EXPECT_EQ(c.out[0], -1.f) << x.what << ": nothing may run";
  }
}

TEST(KvCacheChecks, EveryProblemIsNamedAtOnce) {
  PagedCall c;
  c.lens = {-2, 200, 20};
  c.table[6] = 7;
  EXPECT_EQ(c.error(), kName +
                           ": 3 problems:\n"
                           "  kv_lens[0] = -2 is negative\n"
                           "  kv_lens[1] = 200 is more than a page table row holds (3 pages of 16 = 48 keys)\n"
                           "  page_table[2, 0] = 7 is not a page of k and v (0..5)");
}

TEST(KvCacheChecks, ABrokenTableIsSummedUp) {
  PagedCall c;
  c.lens = {48, 48, 48};
  c.table.assign(c.table.size(), 6);  // nine entries read, none a page
  const std::string e = c.error();
  EXPECT_THAT(e, HasSubstr(kName + ": 9 problems:\n  page_table[0, 0] = 6 is not a page of k and v (0..5)\n"));
  EXPECT_THAT(e, HasSubstr("\n  page_table[2, 1] = 6 is not a page of k and v (0..5)\n  page_table: 1 more problem "
                           "like these"));
}

TEST(KvCacheChecks, ContiguousLengthsStayWithinTkv) {
  PagedCall c;
  c.options.page_table.reset();
  std::vector<float> kv(std::size_t{B} * Hkv * 40 * D, 1.f);
  c.k = c.v = TensorView::contiguous(kv.data(), f32, {B, Hkv, 40, D}, Device::cpu());
  c.lens = {40, 0, 41};
  EXPECT_EQ(c.error(), kName + ": kv_lens[2] = 41 is more than the Tkv=40 keys of k and v");
  c.lens[2] = 40;
  EXPECT_EQ(c.error(), "");
  EXPECT_EQ(c.out[0], 1.f);
}

}  // namespace
}  // namespace flexjit::test

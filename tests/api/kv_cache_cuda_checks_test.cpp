// The checks of a KV cache (ForwardOptions::kv_lens, page_table) given to a CUDA kernel: each
// problem an ArgumentError with its exact message, found on the host before the driver is
// touched, so they run without a GPU. The values themselves are device memory that the host never
// reads (the kernel checks them: tests/gpu/decode_test.cpp); here they sit behind fake pointers,
// which a read would crash on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "jit/cuda_driver.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/support/decode_case.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

constexpr int kPages = 6, kPageSize = 16, kMaxPages = 3;  // alibi_kernel(): Hkv 4, D 64; B 2

const BlockMask no_mask{};

void* fake_device(std::uintptr_t slot) { return reinterpret_cast<void*>(0x20000000u + slot * 0x100000u); }

// A valid call of alibi_kernel() (good_args) on a paged cache: k and v [6, 16, 4, 64], kv_lens
// [2] and page_table [2, 3] on cuda:0, next to q.
struct CudaKvCall {
  Args a = good_args();
  ForwardOptions options = a.options();

  CudaKvCall() {
    a.k.shape = a.v.shape = {kPages, kPageSize, 4, 64};
    options.kv_lens = TensorView::contiguous(fake_device(1), i32, {2});
    options.page_table = TensorView::contiguous(fake_device(2), i32, {2, kMaxPages});
  }
  void run() const { alibi_kernel().forward(a.q, a.k, a.v, a.out, options); }
  std::string error() const {
    return error_of([&] { run(); });
  }
};

TEST(KvCacheCudaChecks, EachProblemHasItsMessage) {
  const struct {
    const char* what;
    void (*breaks)(CudaKvCall&);
    std::string message;
  } cases[] = {
      {"no lengths", [](CudaKvCall& c) { c.options.kv_lens.reset(); },
       "page_table: needs kv_lens, the number of keys of each sequence"},
      {"int64 lengths", [](CudaKvCall& c) { c.options.kv_lens->dtype = i64; }, "kv_lens: dtype must be i32, got i64"},
      {"lengths of rank 2", [](CudaKvCall& c) { c.options.kv_lens->shape = {2, 1}; },
       "kv_lens: expected 1 dim [B], got [2, 1]"},
      {"lengths of another batch", [](CudaKvCall& c) { c.options.kv_lens->shape = {3}; },
       "q and kv_lens: batch size B 2 vs 3"},
      {"lengths in host memory", [](CudaKvCall& c) { c.options.kv_lens->device = Device::cpu(); },
       "kv_lens: is on the cpu, but the kernel needs CUDA device memory"},
      {"lengths on another GPU", [](CudaKvCall& c) { c.options.kv_lens->device = Device::cuda(1); },
       "kv_lens: is on cuda:1 but q is on cuda:0"},
      {"null lengths", [](CudaKvCall& c) { c.options.kv_lens->data = nullptr; }, "kv_lens: data is null"},
      {"misaligned lengths", [](CudaKvCall& c) { c.options.kv_lens->data = static_cast<char*>(fake_device(1)) + 2; },
       "kv_lens: data must be 4-byte aligned, got address 0x20100002"},
      {"a table in host memory", [](CudaKvCall& c) { c.options.page_table->device = Device::cpu(); },
       "page_table: is on the cpu, but the kernel needs CUDA device memory"},
      {"a table on another GPU", [](CudaKvCall& c) { c.options.page_table->device = Device::cuda(1); },
       "page_table: is on cuda:1 but q is on cuda:0"},
      {"a table of rank 1", [](CudaKvCall& c) { c.options.page_table->shape = {2 * kMaxPages}; },
       "page_table: expected 2 dims [B, max_pages_per_seq], got [6]"},
      {"a table of another batch", [](CudaKvCall& c) { c.options.page_table->shape = {1, kMaxPages}; },
       "q and page_table: batch size B 2 vs 1"},
      {"a table without columns", [](CudaKvCall& c) { c.options.page_table->shape = {2, 0}; },
       "page_table: max_pages_per_seq must be >= 1, got 0"},
      {"a table longer than a sequence can be", [](CudaKvCall& c) { c.options.page_table->shape = {2, 200000000}; },
       "page_table: max_pages_per_seq 200000000 of 16 keys each is more than 2147483647 keys"},
      {"a float table", [](CudaKvCall& c) { c.options.page_table->dtype = f32; },
       "page_table: dtype must be i32, got f32"},
      {"a page size of 8", [](CudaKvCall& c) { c.a.k.shape = c.a.v.shape = {kPages * 2, 8, 4, 64}; },
       "k: page_size 8 is not a multiple of 16 in [16, 256]"},
      {"pages of 512", [](CudaKvCall& c) { c.a.k.shape = c.a.v.shape = {kPages / 2, 512, 4, 64}; },
       "k: page_size 512 is not a multiple of 16 in [16, 256]"},
      {"pages of 24", [](CudaKvCall& c) { c.a.k.shape = c.a.v.shape = {4, 24, 4, 64}; },
       "k: page_size 24 is not a multiple of 16 in [16, 256]"},
      {"pages of another shape", [](CudaKvCall& c) { c.a.v.shape = {kPages * 2, 8, 4, 64}; },
       "v: expected the shape of k [6, 16, 4, 64], got [12, 8, 4, 64]"},
      {"dense k and v with a table", [](CudaKvCall& c) { c.a.k.shape = c.a.v.shape = {kPages, kPageSize, 4}; },
       "k: expected 4 dims [num_pages, page_size, Hkv, D], got [6, 16, 4]"},
      {"a block mask", [](CudaKvCall& c) { c.options.block_mask = &no_mask; },
       "block_mask: a call with a KV cache takes none (its kernels classify each sequence's keys)"},
  };
  for (const auto& x : cases) {
    CudaKvCall c;
    x.breaks(c);
    EXPECT_THROW(c.run(), ArgumentError) << x.what;
    EXPECT_THAT(c.error(), HasSubstr(x.message)) << x.what;
  }
}

TEST(KvCacheCudaChecks, ContiguousCachesTakeLengthsAlone) {
  CudaKvCall c;
  c.options.page_table.reset();
  c.a.k.shape = c.a.v.shape = {2, 4, 128, 64};
  c.options.kv_lens->device = Device::cpu();
  EXPECT_EQ(c.error(), alibi_kernel().entry_name() + ": kv_lens: is on the cpu, but the kernel needs CUDA device memory");
}

TEST(KvCacheCudaChecks, EveryProblemIsNamedAtOnce) {
  CudaKvCall c;
  c.options.kv_lens->device = Device::cpu();
  c.options.page_table->dtype = i64;
  c.options.page_table->shape = {3, kMaxPages};
  EXPECT_EQ(c.error(), alibi_kernel().entry_name() +
                           ": 3 problems:\n"
                           "  kv_lens: is on the cpu, but the kernel needs CUDA device memory\n"
                           "  page_table: dtype must be i32, got i64\n"
                           "  q and page_table: batch size B 2 vs 3");
}

// A valid call gets past every check without reading a length or a page (the pointers are fake:
// a read would crash), and without a driver fails at the launch.
TEST(KvCacheCudaChecks, AValidCallReadsNoValueOnTheHost) {
  if (jit::driver_available()) GTEST_SKIP() << "a CUDA driver is present (the fake pointers must not be launched)";
  for (bool paged : {true, false}) {
    CudaKvCall c;
    if (!paged) {
      c.options.page_table.reset();
      c.a.k.shape = c.a.v.shape = {2, 4, 128, 64};
    }
    const std::string e = c.error();
    EXPECT_THAT(e, HasSubstr("cannot launch")) << e;
    EXPECT_THAT(e, HasSubstr("CUDA driver")) << e;
    EXPECT_THAT(e, ::testing::Not(HasSubstr("kv_lens"))) << e;
  }
}

// Block lists are read per query block: decode takes them only while the new tokens fit in one
// (a host-side refusal, before the driver is touched).
TEST(KvCacheCudaChecks, BlockListsNeedTheNewTokensInOneQueryBlock) {
  const Kernel kernel = engine().compile(load_decode_program(decode_program("top_k_blocks")),
                                         {.head_dim = 64, .dtype = bf16, .arch = "sm_90a"});
  constexpr int Tq = 17;  // two query blocks of 16
  const TensorView q = TensorView::contiguous(fake_device(3), bf16, {2, 8, Tq, 64});
  const TensorView out = TensorView::contiguous(fake_device(4), bf16, {2, 8, Tq, 64});
  const TensorView kv = TensorView::contiguous(fake_device(5), bf16, {kPages, kPageSize, 4, 64});
  ForwardOptions o{.lse = TensorView::contiguous(fake_device(6), f32, {2, 8, Tq}),
                   .bind = {{"offsets", TensorView::contiguous(fake_device(7), i32, {2})},
                            {"selected", TensorView::contiguous(fake_device(8), i32, {2, 4, 2, 3})}}};
  o.kv_lens = TensorView::contiguous(fake_device(1), i32, {2});
  o.page_table = TensorView::contiguous(fake_device(2), i32, {2, kMaxPages});
  try {
    kernel.forward(q, kv, kv, out, o);
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("block"));
    EXPECT_THAT(e.what(), HasSubstr("Tq=17"));
  }
}

}  // namespace
}  // namespace flexjit::test

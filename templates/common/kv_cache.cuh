// flexjit: one sequence of a KV cache (KvCacheRef, common/kernel_args.cuh) as the kernels read it:
// its length and its pages, checked as they are read, since the host never reads them. Shared by
// the decode kernel and the prefill families' chunk kernels.
#pragma once

#include "common/attention_common.cuh"

namespace flexjit {
namespace detail {

struct CachedSequence {
  int len;           // the keys of the sequence (0 when broken)
  bool bad;          // a length outside [0, capacity], or a page outside [0, num_pages)
  const int* pages;  // its page table row; null when k and v are dense
};

// Sequence b of the cache, whose keys can number `capacity` at most (CommonArgs::Tkv). With
// check_pages, thread `tid` of NTHREADS checks its share of every page the length reaches: the
// caller combines the threads' verdicts (__syncthreads_or) where it needs the whole one.
template <int NTHREADS>
__device__ __forceinline__ CachedSequence cached_sequence(const KvCacheRef& c, int capacity, int b, int tid,
                                                          bool check_pages) {
  CachedSequence s;
  s.len = __ldg(c.kv_lens + b * c.lens_stride);
  s.bad = s.len < 0 || s.len > capacity;
  if (s.bad) s.len = 0;
  s.pages = c.page_table != nullptr ? c.page_table + b * c.pt_b : nullptr;
  if (s.pages != nullptr && check_pages) {
    const int n = (s.len + c.page_size - 1) / c.page_size;
    for (int i = tid; i < n; i += NTHREADS) {
      const int page = __ldg(s.pages + i * c.pt_p);
      s.bad = s.bad || page < 0 || page >= c.num_pages;
    }
  }
  return s;
}

// The page holding key `key` of the sequence whose page table row is `pages`.
__device__ __forceinline__ int page_of(const KvCacheRef& c, const int* pages, int key) {
  return __ldg(pages + (key / c.page_size) * c.pt_p);
}

// Rows [q0, q1) of (b, h), DV columns: NaN in out and lse, the rows of a broken sequence.
template <int DV, int NTHREADS, bool kBf16>
__device__ __forceinline__ void write_nan_rows(const AttnArgs& args, int b, int h, int q0, int q1, int tid) {
  const float nan = __int_as_float(0x7fc00000);
  const unsigned nan2 = pack2<kBf16>(nan, nan);
  unsigned short* gO =
      static_cast<unsigned short*>(args.o) + static_cast<i64>(b) * args.o_b + static_cast<i64>(h) * args.o_h;
  for (int i = tid; i < (q1 - q0) * (DV / 2); i += NTHREADS) {
    const int r = q0 + i / (DV / 2), c = 2 * (i % (DV / 2));
    *reinterpret_cast<unsigned*>(gO + static_cast<i64>(r) * args.o_t + c) = nan2;
  }
  if (args.lse != nullptr)
    for (int r = q0 + tid; r < q1; r += NTHREADS) args.lse[(static_cast<i64>(b) * args.Hq + h) * args.Tq + r] = nan;
}

}  // namespace detail
}  // namespace flexjit

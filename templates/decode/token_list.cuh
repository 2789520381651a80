// flexjit: token-level top-k (TokenIndices) in the decode kernel: one query row's list of keys,
// read once per CTA into shared memory and turned into the keys the CTA walks, ascending and each
// once, so that chunk c holds keys [c * BN, + BN) of it and every lane finds its key by one read.
//
// Instantiated only for programs that declare TokenIndices (Mods::kTokenList).
#pragma once

#include "common/attention_common.cuh"

namespace flexjit {
namespace detail {

// Sorts v[0, n) ascending, n a power of two, with NTHREADS threads: a bitonic network of
// log2(n) * (log2(n) + 1) / 2 steps of n / 2 compare-exchanges, a barrier after each.
template <int NTHREADS>
__device__ __forceinline__ void bitonic_sort(int* v, int n, int tid) {
  for (int k = 2; k <= n; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int c = tid; c < n / 2; c += NTHREADS) {
        // Comparator c joins i (bit j clear) and i + j; the block of k decides the direction.
        const int i = ((c & ~(j - 1)) << 1) | (c & (j - 1));
        const int x = v[i], y = v[i + j];
        const bool ascending = (i & k) == 0;
        if ((x > y) == ascending) {
          v[i] = y;
          v[i + j] = x;
        }
      }
      __syncthreads();
    }
  }
}

// The exclusive prefix sum of `count` over the CTA's NTHREADS threads (`total` gets the sum).
// `warp_sums` holds NTHREADS / 32 ints of shared memory.
template <int NTHREADS>
__device__ __forceinline__ int cta_exclusive_sum(int count, int tid, int* warp_sums, int& total) {
  const int lane = tid & 31, warp = tid >> 5;
  int inclusive = count;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int x = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += x;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  int before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < NTHREADS / 32; ++w) {
    before += w < warp ? warp_sums[w] : 0;
    total += warp_sums[w];
  }
  return before + inclusive - count;
}

// Row `token` of query head h's list (b's) -> keys[0, n): the entries in [lo, hi), ascending,
// each once; returns n in every thread. An entry below -1 or at or past `len` (the sequence's
// keys) sets `bad`: the caller's rows become NaN, and the entry is never read as a key. `scratch`
// (the list, padded to a power of two) and `warp_sums` (NTHREADS / 32) are shared memory free until
// this returns; `keys` holds K ints. Ends with a barrier: keys is visible to every thread, scratch
// free.
template <class Mods, int NTHREADS>
__device__ __forceinline__ int gather_token_list(const typename Mods::Params& p, int b, int h, int token, int len,
                                                 int lo, int hi, int* scratch, int* warp_sums, int* keys, int tid,
                                                 bool& bad) {
  constexpr int kDropped = 0x7fffffff;  // sorts after every key
  const int K = Mods::token_list_length(p);  // 1 <= K <= decode::max_token_list() (checked by the host)
  int n = 2;
  while (n < K) n <<= 1;
  for (int i = tid; i < n; i += NTHREADS) {
    const int key = i < K ? Mods::token_list_entry(p, b, h, token, i) : -1;
    bad = bad || key < -1 || key >= len;
    scratch[i] = key >= lo && key < hi ? key : kDropped;  // lo >= 0: -1 is dropped too
  }
  __syncthreads();
  bitonic_sort<NTHREADS>(scratch, n, tid);

  // Each thread keeps the first of each run of equal keys in its own stretch of the sorted list.
  const int per_thread = (n + NTHREADS - 1) / NTHREADS;
  const int begin = min2(n, tid * per_thread), end = min2(n, begin + per_thread);
  auto kept = [&](int i) { return scratch[i] != kDropped && (i == 0 || scratch[i - 1] != scratch[i]); };
  int count = 0;
  for (int i = begin; i < end; ++i) count += kept(i) ? 1 : 0;
  int total;
  int at = cta_exclusive_sum<NTHREADS>(count, tid, warp_sums, total);
  for (int i = begin; i < end; ++i)
    if (kept(i)) keys[at++] = scratch[i];
  __syncthreads();
  return total;
}

}  // namespace detail
}  // namespace flexjit

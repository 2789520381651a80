// flexjit: the tile-map builder for masks that read captured tensors (documents, per-batch prefix
// lengths, selection tables).
//
// Interval arithmetic on the indices alone cannot classify such a mask: a load may return any
// value of its dtype. The builder runs the same interval analysis, but reads each load's values
// over the box of indices a tile can reach (warp-cooperatively, min / max reduced), so
// `doc[q] == doc[kv]` on a tile whose queries all sit in document 3 and whose keys all sit in
// document 5 is EMPTY, and FULL when both sides are all document 3. One launch classifies every
// (query tile, kv tile) pair inside the closed-form kv range and writes, per query tile, the
// visited tiles in ascending order, each as `kv_tile * 4 + class` (FULL or PARTIAL). The forward
// kernel then follows that list instead of walking and classifying the range itself.
//
// Work is proportional to the number of tile pairs times the box sizes (about the tile edges),
// never to Tq * Tkv elements. Soundness is what the forward kernel needs: a tile is EMPTY or FULL
// only if every element is; PARTIAL is always allowed (the element mask then decides).
//
// Layout of a built map (device memory, int32):
//   counts  [Bm][Hm][n_q_tiles]                 visited tiles per query tile
//   entries [Bm][Hm][n_q_tiles][n_kv_tiles]     the first counts[...] of each row are valid
// Bm is 1 when the mask ignores b (the map is shared by all batch entries), else B; Hm likewise
// for h (Hq otherwise).
#pragma once

#include "common/attention_common.cuh"
#include "common/interval.cuh"
#include "common/mods_traits.cuh"

namespace flexjit {

// Boxes larger than this are not read: the load then counts as any value of its dtype.
constexpr long long kMaxBoxElements = 4096;

// TileMapArgs: common/kernel_args.cuh.

namespace detail {

__device__ __forceinline__ long long warp_min_ll(long long v) {
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) v = min2(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ long long warp_max_ll(long long v) {
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) v = max2(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

template <class T>
__device__ __forceinline__ long long load_as_ll(const void* base, long long offset) {
  return static_cast<long long>(static_cast<const T*>(base)[offset]);
}

}  // namespace detail

// The values a rank-R tensor holds over the index box idx[0] x ... x idx[R-1] (each clipped to
// the tensor's extent), as an interval; `fallback` (the dtype's range) when the box is empty
// after clipping or larger than kMaxBoxElements. Warp-collective: all 32 lanes must call it with
// the same arguments; the result is the same in every lane.
template <class T, int R>
__device__ __forceinline__ IntInterval warp_box_range(const void* base, const IntInterval (&idx)[R],
                                                      const long long (&stride)[R], const long long (&size)[R],
                                                      IntInterval fallback) {
  long long lo[R], extent[R];
  long long volume = 1;
#pragma unroll
  for (int d = 0; d < R; ++d) {
    lo[d] = max2(idx[d].lo, 0LL);
    const long long hi = min2(idx[d].hi, size[d] - 1);
    if (hi < lo[d]) return fallback;
    extent[d] = hi - lo[d] + 1;
    if (extent[d] > kMaxBoxElements) return fallback;
    volume *= extent[d];
    if (volume > kMaxBoxElements) return fallback;
  }
  long long mn = kIvMax, mx = kIvMin;
  for (long long i = threadIdx.x & 31; i < volume; i += 32) {
    long long rest = i, offset = 0;
#pragma unroll
    for (int d = R - 1; d >= 0; --d) {
      offset += (lo[d] + rest % extent[d]) * stride[d];
      rest /= extent[d];
    }
    const long long v = detail::load_as_ll<T>(base, offset);
    mn = min2(mn, v);
    mx = max2(mx, v);
  }
  return IntInterval{detail::warp_min_ll(mn), detail::warp_max_ll(mx)};
}

// Bool tensors are stored one byte per element; a byte that is not 0 reads as true.
template <int R>
__device__ __forceinline__ BoolInterval warp_box_bool(const void* base, const IntInterval (&idx)[R],
                                                      const long long (&stride)[R], const long long (&size)[R]) {
  const IntInterval r = warp_box_range<unsigned char, R>(base, idx, stride, size, iv_uint8());
  return bi_from_int(r);
}

namespace detail {

// Classifies tiles [t_lo, t_hi), one per warp (classify_tile(t): EMPTY, FULL or PARTIAL, warp-
// collective), and writes the visited ones in ascending order to out as `t * 4 + class`; returns
// their number (in every thread). Block-collective: every thread must call it.
template <int kWarps, class ClassifyTile>
__device__ __forceinline__ int compact_classified(int t_lo, int t_hi, int* out, const ClassifyTile& classify_tile) {
  __shared__ int s_cls[kWarps];
  __shared__ int s_count;
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  int count = 0;  // meaningful in warp 0
  for (int base = t_lo; base < t_hi; base += kWarps) {
    const int t = base + warp;
    const int cls = t < t_hi ? classify_tile(t) : EMPTY;  // warp-uniform
    if (lane == 0) s_cls[warp] = cls;
    __syncthreads();
    if (warp == 0) {
      const int c = lane < kWarps ? s_cls[lane] : EMPTY;
      const unsigned visited = __ballot_sync(0xffffffffu, c != EMPTY);
      if (c != EMPTY) out[count + __popc(visited & ((1u << lane) - 1u))] = (base + lane) * 4 + c;
      count += __popc(visited);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) s_count = count;
  __syncthreads();
  return s_count;
}

// The tiles of kTile indices that [lo, hi), clipped to [0, n), reaches: [t_lo, t_hi), empty when
// the clipped range is.
template <int kTile>
__device__ __forceinline__ void tiles_reached(int lo, int hi, int n, int& t_lo, int& t_hi) {
  lo = max2(lo, 0);
  hi = min2(hi, n);
  t_lo = hi > lo ? lo / kTile : 0;
  t_hi = hi > lo ? (hi + kTile - 1) / kTile : 0;
}

}  // namespace detail

// The forward's map. Grid (n_q_tiles, Hm, Bm), kWarps * 32 threads. Mods::classify (indices
// only) settles a tile first; Mods::classify_data (with box reads) runs only where that says
// PARTIAL.
template <class Mods, int BM, int BN, int kWarps>
__device__ __forceinline__ void build_tile_map(const TileMapArgs& a, const typename Mods::Params& p,
                                               const typename Mods::Extents& x) {
  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const int m = blockIdx.x;
  const int q0 = m * BM;
  const int q1 = min2(q0 + BM, a.Tq);
  const long long row = (static_cast<long long>(b) * a.Hm + h) * a.n_q_tiles + m;

  int lo = 0, hi = a.Tkv;
  Mods::kv_range(p, b, h, q0, q1, a.Tkv, &lo, &hi);
  int t_lo, t_hi;
  detail::tiles_reached<BN>(lo, hi, a.Tkv, t_lo, t_hi);
  const int count = detail::compact_classified<kWarps>(t_lo, t_hi, a.entries + row * a.n_kv_tiles, [&](int t) {
    const int k0 = t * BN, k1 = min2(k0 + BN, a.Tkv);
    const int cls = Mods::classify(p, b, h, q0, q1, k0, k1);
    return cls == PARTIAL ? Mods::classify_data(p, x, b, h, q0, q1, k0, k1) : cls;
  });
  if (threadIdx.x == 0) a.counts[row] = count;
}

// What the builder of a block-list program's map takes for Extents (it reads no index box).
struct NoExtents {};

// The backward's map, transposed: per kv tile of BN keys, the query tiles of BM rows that reach
// it, in the same `tile * 4 + class` form. Grid (n_kv_tiles, Hm, Bm), kWarps * 32 threads; the
// map's rows are (b * Hm + h) * n_kv_tiles + kv tile, each n_q_tiles entries long. The query range
// comes from Mods::q_range; a block-list program keeps the query tiles whose block lists this kv
// tile's block (BN divides the kv block, BM the query block), a mask that reads tensors refines
// classify's PARTIAL with the box reads of classify_data (x: its Mods::Extents).
template <class Mods, int BM, int BN, int kWarps, class Extents>
__device__ __forceinline__ void build_q_tile_map(const TileMapArgs& a, const typename Mods::Params& p,
                                                 const Extents& x) {
  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const int n = blockIdx.x;
  const int k0 = n * BN;
  const int k1 = min2(k0 + BN, a.Tkv);
  const long long row = (static_cast<long long>(b) * a.Hm + h) * a.n_kv_tiles + n;

  int lo = 0, hi = a.Tq;
  detail::QRangeOf<Mods>::get(p, b, h, k0, k1, a.Tq, &lo, &hi);
  int t_lo, t_hi;
  detail::tiles_reached<BM>(lo, hi, a.Tq, t_lo, t_hi);
  const int count = detail::compact_classified<kWarps>(t_lo, t_hi, a.entries + row * a.n_q_tiles, [&](int t) {
    const int q0 = t * BM, q1 = min2(q0 + BM, a.Tq);
    if constexpr (detail::BlockListOf<Mods>::value) {
      const int block = (k0 / Mods::kBlockListKv) * Mods::kBlockListKv;
      const int listed = Mods::block_list_count(p, b, h, q0);
      bool found = false;
      for (int i = 0; i < listed && !found; ++i) found = Mods::block_list_entry(p, b, h, q0, i) == block;
      if (!found) return static_cast<int>(EMPTY);
    }
    const int cls = Mods::classify(p, b, h, q0, q1, k0, k1);
    if constexpr (detail::TileMapOf<Mods>::value) {
      if (cls == PARTIAL) return Mods::classify_data(p, x, b, h, q0, q1, k0, k1);
    }
    return cls;
  });
  if (threadIdx.x == 0) a.counts[row] = count;
}

}  // namespace flexjit

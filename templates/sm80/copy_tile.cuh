// flexjit: the sm80 families' global -> shared tile copy (cp.async, padded rows), shared by the
// forward and the backward templates.
#pragma once

#include "common/attention_common.cuh"

namespace flexjit {

namespace detail {

// Copies a ROWS x D tile (g_tile: its first row; row_stride elements between rows) into padded
// shared memory with 16-byte cp.async. Thread `tid` copies chunk column tid % kChunks of rows
// tid / kChunks + p * kRowsPerPass. Only a tile that crosses the end of the sequence (kCheck)
// predicates its rows: rows >= rows_valid are zero-filled without reading global memory.
// Nothing is kept between calls: the few integer ops are cheaper than the registers they would hold.
template <int ROWS, int D, int LDS, int NTHREADS, bool kCheck>
__device__ __forceinline__ void copy_tile(unsigned s_tile, const unsigned short* g_tile, i64 row_stride,
                                          int rows_valid, int tid) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  constexpr int kRowsPerPass = NTHREADS / kChunks;
  constexpr int kPasses = (ROWS + kRowsPerPass - 1) / kRowsPerPass;
  constexpr bool kAllActive = NTHREADS % kChunks == 0;
  constexpr bool kWholePasses = ROWS % kRowsPerPass == 0;
  static_assert(kRowsPerPass >= 1, "not enough threads for one row");
  const int r0 = tid / kChunks;
  const int ch = tid % kChunks;
  const unsigned short* src = g_tile + static_cast<i64>(r0) * row_stride + ch * 8;
  const i64 step = static_cast<i64>(kRowsPerPass) * row_stride;
  const unsigned dst = s_tile + static_cast<unsigned>(r0 * LDS * 2 + ch * 16);
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int r = r0 + p * kRowsPerPass;
    const bool active = (kAllActive || r0 < kRowsPerPass) && (kWholePasses || r < ROWS);
    if (active) {
      const bool ok = !kCheck || r < rows_valid;
      cp_async_16(dst + p * kRowsPerPass * LDS * 2, ok ? src : g_tile, ok);
    }
    src += step;
  }
}

}  // namespace detail

}  // namespace flexjit

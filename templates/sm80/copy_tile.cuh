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
// Which thread copies what of a ROWS x D tile: 16-byte chunk columns, rows in passes of NTHREADS.
template <int ROWS, int D, int NTHREADS>
struct TileCopyLayout {
  static constexpr int kChunks = D / 8;  // 16-byte chunks per row
  static constexpr int kRowsPerPass = NTHREADS / kChunks;
  static constexpr int kPasses = (ROWS + kRowsPerPass - 1) / kRowsPerPass;
  static constexpr bool kAllActive = NTHREADS % kChunks == 0;
  static constexpr bool kWholePasses = ROWS % kRowsPerPass == 0;
  static_assert(kRowsPerPass >= 1, "not enough threads for one row");
};

template <int ROWS, int D, int LDS, int NTHREADS, bool kCheck>
__device__ __forceinline__ void copy_tile(unsigned s_tile, const unsigned short* g_tile, i64 row_stride,
                                          int rows_valid, int tid) {
  using L = TileCopyLayout<ROWS, D, NTHREADS>;
  constexpr int kChunks = L::kChunks, kRowsPerPass = L::kRowsPerPass, kPasses = L::kPasses;
  constexpr bool kAllActive = L::kAllActive, kWholePasses = L::kWholePasses;
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

// copy_tile for rows at no fixed stride (the pages of a KV cache): row r of the tile starts at
// row_at(r), asked for rows < rows_valid only; the others are zero-filled (`any` is a readable
// address for their predicated-off copies).
template <int ROWS, int D, int LDS, int NTHREADS, class RowAt>
__device__ __forceinline__ void copy_tile_rows(unsigned s_tile, RowAt row_at, const unsigned short* any, int rows_valid,
                                               int tid) {
  using L = TileCopyLayout<ROWS, D, NTHREADS>;
  constexpr int kChunks = L::kChunks, kRowsPerPass = L::kRowsPerPass, kPasses = L::kPasses;
  constexpr bool kAllActive = L::kAllActive, kWholePasses = L::kWholePasses;
  const int r0 = tid / kChunks;
  const int ch = tid % kChunks;
  const unsigned dst = s_tile + static_cast<unsigned>(r0 * LDS * 2 + ch * 16);
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int r = r0 + p * kRowsPerPass;
    if ((kAllActive || r0 < kRowsPerPass) && (kWholePasses || r < ROWS)) {
      const bool ok = r < rows_valid;
      cp_async_16(dst + p * kRowsPerPass * LDS * 2, ok ? row_at(r) + ch * 8 : any, ok);
    }
  }
}

}  // namespace detail

}  // namespace flexjit

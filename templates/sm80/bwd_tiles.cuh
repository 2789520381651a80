// flexjit: the sm80 backward family's tile table and shared-memory formula. The one copy: the host
// (codegen/sm80_bwd) picks tiles and sizes launches with it, and the kernel template (BwdConfig)
// is built from it.
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

namespace flexjit {
namespace sm80 {

// A CTA owns block_n keys of one (batch, kv head): every warp 16 of them, with their dK and dV
// rows in registers (2 * D / 8 * 4 floats per thread), and walks the query tiles of block_m rows
// that reach them, `stages` of which are in flight (Q, dO, lse, D). M before N, as every tile.
struct BwdTile {
  int block_m, block_n, warps, stages;
};

// The head dims the family serves: dK and dV of 16 keys x D stay in registers up to D = 128.
constexpr bool bwd_serves_head_dim(int head_dim) { return head_dim % 16 == 0 && head_dim >= 16 && head_dim <= 128; }

// The shipped tile: 128 keys (8 warps) against query tiles of 128 rows at D <= 64, 64 at D <= 128,
// double-buffered (H200, forward + backward, bench/NOTES.md: causal D = 128 243 -> 263 TF/s over
// 32 rows, causal D = 64 233 -> 245 over 64). dK, dV, S^T and dP^T then fill the 255 registers:
// a program whose mods make ptxas spill more than kBwdTolerableSpillBytes gets the tile with half
// the query rows instead (api/backward_kernel.cpp), which spills none.
constexpr BwdTile default_bwd_tile(int head_dim) {
  return head_dim <= 64 ? BwdTile{128, 128, 8, 2} : BwdTile{64, 128, 8, 2};
}
constexpr BwdTile bwd_tile_if_spills(int head_dim) {
  return head_dim <= 64 ? BwdTile{64, 128, 8, 2} : BwdTile{32, 128, 8, 2};
}
// A few spilled bytes (loop state ptxas parks once per query tile, not per product) cost less
// than the smaller tile's extra barriers and loads.
constexpr int kBwdTolerableSpillBytes = 16;

// The constraints a tile must meet (the template static_asserts the same): whole warps of 16
// keys, whole m16 query tiles, and the dQ product's warp grid (block_m / 16 query tiles times
// warps / that many head-dim slices, each a whole number of n8 tiles).
constexpr bool bwd_tile_fits(const BwdTile& t, int head_dim) {
  return t.block_n == 16 * t.warps && t.block_m % 16 == 0 && t.block_m >= 16 && t.warps % (t.block_m / 16) == 0 &&
         (head_dim / 8) % (t.warps / (t.block_m / 16)) == 0 && t.stages >= 1;
}

// Rows are padded by 8 elements (16 bytes), as in the forward, so that ldmatrix phases spread
// over the banks; dS^T rows likewise.
constexpr int bwd_smem_stride(int head_dim) { return head_dim + 8; }
constexpr int bwd_ds_stride(int block_m) { return block_m + 8; }

// K and V (block_n rows each), per stage Q and dO (block_m rows each) and lse2, delta (block_m
// floats each), and dS^T (block_n x block_m, 16-bit).
constexpr int bwd_smem_bytes(int head_dim, int block_m, int block_n, int stages) {
  return (2 * block_n + 2 * stages * block_m) * bwd_smem_stride(head_dim) * 2 + stages * 2 * block_m * 4 +
         block_n * bwd_ds_stride(block_m) * 2;
}

// The pre-pass (D, lse2, dQ zeroing) and the post-pass (dQ to 16-bit): rows per CTA, one warp per
// row at a time.
constexpr int kBwdPassThreads = 128;
constexpr int kBwdPassRows = 16;
constexpr int kBwdPassWarps = kBwdPassThreads / 32;

}  // namespace sm80
}  // namespace flexjit

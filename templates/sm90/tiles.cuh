// flexjit: the sm90 forward family's tile table and shared-memory formula, the one copy for the
// host (codegen/sm90_fwd) and the kernel (templates/sm90/attention_fwd.cuh).
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

namespace flexjit {
namespace sm90 {

struct FwdTile {
  int block_m;  // query rows per CTA: 64 per consumer warpgroup
  int block_n;  // keys per K/V tile (the N of the QK^T wgmma)
  int stages;   // depth of the K/V ring
};

// Head dims the family serves (the N of the PV wgmma, in 64-column swizzle blocks).
constexpr bool serves_head_dim(int head_dim) { return head_dim == 64 || head_dim == 128; }

// The shipped tile per head dim: two consumer warpgroups of 64 rows, 128 keys per tile.
//   D = 64 : 128 x 128, 4 stages.   Q 16 KB + K, V 4 x 32 KB = 144 KB.
//   D = 128: 128 x 128, 2 stages.   Q 32 KB + K, V 2 x 64 KB = 160 KB.
constexpr FwdTile default_fwd_tile(int head_dim) {
  return head_dim <= 64 ? FwdTile{128, 128, 4} : FwdTile{128, 128, 2};
}

constexpr int kSwizzleBytes = 128;  // TMA / wgmma 128-byte swizzle: 64 16-bit columns per block
constexpr int kTileAlign = 1024;    // a swizzled tile starts on a 1024-byte boundary

// Bytes of one [rows x D] 16-bit tile (D / 64 column blocks of rows x 128 bytes).
constexpr int fwd_tile_bytes(int rows, int head_dim) { return rows * head_dim * 2; }

// Dynamic shared memory of one CTA: Q, the K and V rings, the mbarriers (Q, then K full, V full
// and K/V empty per stage, 8 bytes each), and the slack to align the start to 1024 bytes.
constexpr int fwd_smem_bytes(int head_dim, int block_m, int block_n, int stages) {
  return fwd_tile_bytes(block_m, head_dim) + 2 * stages * fwd_tile_bytes(block_n, head_dim) + 8 * (1 + 3 * stages) +
         kTileAlign;
}

}  // namespace sm90
}  // namespace flexjit

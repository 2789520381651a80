// flexjit: the sm80 forward family's tile table and shared-memory formula. The one copy: the host
// (codegen/sm80_fwd/tiles.cpp) picks tiles and sizes launches with it, and the kernel template
// (FwdConfig, DefaultFwdConfig) is built from it, so the two cannot drift apart.
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

namespace flexjit {
namespace sm80 {

struct FwdTile {
  int block_m, block_n, warps, stages;
  bool q_in_registers;
  int min_blocks_per_sm;  // __launch_bounds__ occupancy hint
};

// The shipped tile per head dim, measured on an H200 (bench/NOTES.md, tests/templates/README.md and
// bench/tile-sweep have the sweeps), the same for bf16 and fp16. Every warp owns 32 query rows
// (two m16 tiles) so each K/V fragment read from shared memory feeds two mma's; Q is re-read from
// shared memory so that two CTAs fit per SM without spills.
//   D <= 64 : 128 x 64, 4 warps, 3 stages (causal D = 64: 278 -> 286 TF/s over 2 stages). Keeping
//             Q in registers gains another 1% on causal but makes 11 of the 23 example and test
//             masks spill (ptxas, sm_90a).                                                  72 KB.
//   D <= 128: 128 x 32, 4 warps, 2 stages (64 Q registers do not fit next to the 128 O
//             accumulators; 64 keys per tile spill or run slower; 3 stages within noise).  68 KB.
//   D <= 256: 64 x 32, 4 warps x 16 rows (128 O accumulators per thread).                 99 KB.
constexpr FwdTile default_fwd_tile(int head_dim) {
  return head_dim <= 64    ? FwdTile{128, 64, 4, 3, false, 2}
         : head_dim <= 128 ? FwdTile{128, 32, 4, 2, false, 2}
                           : FwdTile{64, 32, 4, 2, false, 2};
}

// Shared memory rows are padded by 8 elements (16 bytes): see FwdConfig.
constexpr int fwd_smem_stride(int head_dim) { return head_dim + 8; }

// With Q in registers, the Q tile is staged in the last ring slot (which the prologue leaves empty)
// instead of a region of its own: less shared memory, more CTAs per SM.
constexpr bool fwd_q_aliased(int block_m, int block_n, bool q_in_registers) {
  return q_in_registers && block_m <= 2 * block_n;
}

// Dynamic shared memory of one CTA: a K and a V ring of `stages` tiles, plus the Q tile unless it
// is staged in the ring; 16-bit elements.
constexpr int fwd_smem_bytes(int head_dim, int block_m, int block_n, int stages, bool q_in_registers) {
  return (2 * stages * block_n + (fwd_q_aliased(block_m, block_n, q_in_registers) ? 0 : block_m)) *
         fwd_smem_stride(head_dim) * 2;
}

}  // namespace sm80
}  // namespace flexjit

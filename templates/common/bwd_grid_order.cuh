// flexjit: the order in which the backward's main CTAs take their (kv tile, (b, kv head)), one
// definition for the kernels (common/bwd_tile.cuh) and for the host tests that check it.
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FJ_BWD_GRID_FN __host__ __device__
#else
#define FJ_BWD_GRID_FN
#endif

namespace flexjit {

struct BwdGridSlot {
  unsigned kv_tile, head;  // head: b * Hkv + kv head
};

// CTA (x, y) of the grid {group * kv_tiles, groups}: group y holds the heads y * group .. + group,
// the kv tile slowest within it (group divides the heads: every CTA has work).
FJ_BWD_GRID_FN constexpr BwdGridSlot bwd_grid_slot(unsigned x, unsigned y, unsigned group) {
  return {x / group, y * group + x % group};
}

}  // namespace flexjit

#undef FJ_BWD_GRID_FN

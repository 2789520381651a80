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

// CTA `index` of a 1-D grid of kv_tiles CTAs per head, `heads` heads: groups of `group` heads one
// after another (the last one may be smaller), the kv tile slowest within each group.
FJ_BWD_GRID_FN constexpr BwdGridSlot bwd_grid_slot(unsigned index, unsigned heads, unsigned kv_tiles,
                                                   unsigned group) {
  const unsigned first = index / (group * kv_tiles) * group;  // the group's first head
  const unsigned in_group = group < heads - first ? group : heads - first;
  const unsigned r = index - first * kv_tiles;
  return {r / in_group, first + r % in_group};
}

}  // namespace flexjit

#undef FJ_BWD_GRID_FN

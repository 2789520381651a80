// flexjit: what every family's tile configuration (FwdConfig, BwdConfig, DecodeConfig,
// Sm90FwdConfig) says the same way. Each derives from it and adds its own members (warps,
// shared-memory bytes, ...); kernels and generated wrappers read all of them as Cfg::kName.
#pragma once

#include "common/attention_common.cuh"

namespace flexjit {

//   kHeadDim  D, the head dim of Q, K and V.
//   kBlockM   query rows per CTA (decode: the rows of its one m16 tile).
//   kBlockN   keys per K/V tile.
//   kStages   depth of the ring of tiles in flight.
//   Element   the element type of q, k and v (bf16_t, fp16_t; e4m3_t on the Hopper forward);
//             kIsBf16 selects the mma and conversions, kIsFp8 the FP8 forms, kElementBytes its size.
template <int kHeadDim_, int kBlockM_, int kBlockN_, int kStages_, class Element_>
struct TileConfigBase {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kStages = kStages_;
  using Element = Element_;
  static constexpr bool kIsBf16 = ElementTraits<Element_>::kIsBf16;
  static constexpr bool kIsFp8 = ElementTraits<Element_>::kIsFp8;
  static constexpr int kElementBytes = ElementTraits<Element_>::kBytes;
  // The backward's dq_accum: row-major, or in 64 x 64 blocks per query tile (detail::DqBlockedLayout).
  static constexpr bool kDqBlocked = false;
};

// Cfg::kHeadDimV where the config has one (a value head dim of its own: v, out and dout), else
// Cfg::kHeadDim. A function, not a member of TileConfigBase: a constant it does not declare leaves
// every other config's kernels as they were.
template <class Cfg>
__host__ __device__ constexpr auto value_head_dim(int) -> decltype(Cfg::kHeadDimV + 0) {
  return Cfg::kHeadDimV;
}
template <class Cfg>
__host__ __device__ constexpr int value_head_dim(long) {
  return Cfg::kHeadDim;
}

// The sm80 families, whose CTAs are kWarps plain warps.
template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_, int kStages_, class Element_>
struct WarpTileConfig : TileConfigBase<kHeadDim_, kBlockM_, kBlockN_, kStages_, Element_> {
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = kWarps_ * 32;
};

}  // namespace flexjit

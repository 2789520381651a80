// flexjit: the mods applied to a tile of raw dot products, in the mma accumulator layout that
// every family shares (m16n8 fragments: per warp 16 rows, a thread holds rows g and g + 8 of each
// n8 column block, columns 2t and 2t + 1; wgmma accumulators have the same layout per warp).
#pragma once

#include "common/attention_common.cuh"
#include "common/mods_traits.cuh"

namespace flexjit {
namespace detail {

// Element-wise logits of one S tile (in place, from the raw dot products).
//   kMask:   call Mods::mask per element (PARTIAL tiles).
//   kBounds: mask q >= Tq and kv >= Tkv (tiles at the sequence ends), so that user hooks never see
//            an index out of range.
//   Masked entries become -inf. With a score mod the result is score(scale * s) * log2(e); without
//   one the raw dot product is kept and the scale is folded into the exponent later (one FFMA).
//   The score mod runs only where the score is kept, unless the Mods says it may run anywhere
//   (kScoreAnywhere: it reads no tensor per score); then it runs on every element and the mask
//   selects, without a branch per element.
template <class Mods, bool kMask, bool kBounds, int MT, int NN, class Context>
__device__ __forceinline__ void apply_logits(float (&s)[MT][NN][4], const Context& p, const AttnArgs& args, int b,
                                             int h, int row0, int col0) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int row = row0 + mt * 16 + hf * 8;
      const bool row_ok = !kBounds || row < args.Tq;
#pragma unroll
      for (int nt = 0; nt < NN; ++nt) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int col = col0 + nt * 8 + c;
          float& x = s[mt][nt][2 * hf + c];
          if constexpr (kMask || kBounds) {
            bool keep = row_ok && (!kBounds || col < args.Tkv);
            if constexpr (kMask) keep = keep && Mods::mask(p, b, h, row, col);
            if constexpr (Mods::kHasScoreMod && ScoreAnywhereOf<Mods>::value && !kBounds) {
              const float v = Mods::score(p, x * args.scale, b, h, row, col) * kLog2e;
              x = keep ? v : neg_inf();
            } else if constexpr (Mods::kHasScoreMod) {
              x = keep ? Mods::score(p, x * args.scale, b, h, row, col) * kLog2e : neg_inf();
            } else {
              x = keep ? x : neg_inf();
            }
          } else if constexpr (Mods::kHasScoreMod) {
            x = Mods::score(p, x * args.scale, b, h, row, col) * kLog2e;
          }
        }
      }
    }
  }
}

// The logits of one visited tile by its class: PARTIAL tiles evaluate the mask, FULL tiles skip
// it, and tiles at the sequence ends (`edge`) take the bounds checks and the mask whatever their
// class (true on all of a FULL tile, so the same result). Three copies of the mods, not four: the
// mods are inlined once per copy, and the copies are most of the compile time. row0 / col0 are
// this thread's first row and column (q0 + its warp's first row + g, k0 + 2t).
template <class Mods, int MT, int NN, class Context>
__device__ __forceinline__ void apply_tile_logits(float (&s)[MT][NN][4], const Context& p, const AttnArgs& args,
                                                  int b, int h, int row0, int col0, int cls, bool edge) {
  if (edge) {
    apply_logits<Mods, Mods::kHasMask, true>(s, p, args, b, h, row0, col0);
  } else if (Mods::kHasMask && cls == PARTIAL) {
    apply_logits<Mods, Mods::kHasMask, false>(s, p, args, b, h, row0, col0);
  } else {
    apply_logits<Mods, false, false>(s, p, args, b, h, row0, col0);
  }
}

}  // namespace detail
}  // namespace flexjit

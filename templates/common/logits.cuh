// flexjit: the mods applied to a tile of raw dot products, in the mma accumulator layout that
// every family shares (m16n8 fragments: per warp 16 rows, a thread holds rows g and g + 8 of each
// n8 column block, columns 2t and 2t + 1; wgmma accumulators have the same layout per warp).
#pragma once

#include "common/attention_common.cuh"
#include "common/mods_traits.cuh"

namespace flexjit {
namespace detail {

// Element-wise logits of one S tile (in place).
//   kMask:   call Mods::mask per element (PARTIAL tiles).
//   kBounds: mask q >= Tq and kv >= Tkv (tiles at the sequence ends), so that user hooks never see
//            an index out of range. Tkv is the keys of this sequence (args.Tkv, or its own length
//            where a call gives each sequence one).
//   kScore:  run the score mod (on the raw dot product: score(scale * s) * log2(e); `scale` is the
//            call's, times the descale factors of FP8 inputs). Without it the
//            value is kept as it is: the raw dot product when there is no score mod (the scale is
//            folded into the exponent later, one FFMA), or logits a score-only pass made.
//   Masked entries become -inf; with kScore the score mod runs only where the score is kept.
template <class Mods, bool kMask, bool kBounds, bool kScore, int MT, int NN, class Context>
__device__ __forceinline__ void apply_logits(float (&s)[MT][NN][4], const Context& p, const AttnArgs& args,
                                             float scale, int Tkv, int b, int h, int row0, int col0) {
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
            bool keep = row_ok && (!kBounds || col < Tkv);
            if constexpr (kMask) keep = keep && Mods::mask(p, b, h, row, col);
            if constexpr (kScore)
              x = keep ? Mods::score(p, x * scale, b, h, row, col) * kLog2e : neg_inf();
            else
              x = keep ? x : neg_inf();
          } else if constexpr (kScore) {
            x = Mods::score(p, x * scale, b, h, row, col) * kLog2e;
          }
        }
      }
    }
  }
}

// The logits of one visited tile by its class: PARTIAL tiles evaluate the mask, FULL tiles skip
// it, and tiles at the sequence ends (`edge`) take the bounds checks and the mask whatever their
// class (true on all of a FULL tile, so the same result). The mods are inlined once per copy, and
// the copies of the score mod are most of the compile time: a score mod that may run anywhere
// (Mods::kScoreAnywhere: it reads no tensor per score) runs once on the whole tile, for every
// class, and only the selection is specialised; any other runs only where the score is kept, so
// each class has its own copy. row0 / col0 are this thread's first row and column (q0 + its
// warp's first row + g, k0 + 2t).
template <class Mods, int MT, int NN, class Context>
__device__ __forceinline__ void apply_tile_logits(float (&s)[MT][NN][4], const Context& p, const AttnArgs& args,
                                                  float scale, int Tkv, int b, int h, int row0, int col0, int cls,
                                                  bool edge) {
  constexpr bool kScoreFirst = Mods::kHasScoreMod && ScoreAnywhereOf<Mods>::value;
  constexpr bool kScore = Mods::kHasScoreMod && !kScoreFirst;
  if constexpr (kScoreFirst) apply_logits<Mods, false, false, true>(s, p, args, scale, Tkv, b, h, row0, col0);
  if (edge) {
    apply_logits<Mods, Mods::kHasMask, true, kScore>(s, p, args, scale, Tkv, b, h, row0, col0);
  } else if (Mods::kHasMask && cls == PARTIAL) {
    apply_logits<Mods, Mods::kHasMask, false, kScore>(s, p, args, scale, Tkv, b, h, row0, col0);
  } else {
    apply_logits<Mods, false, false, kScore>(s, p, args, scale, Tkv, b, h, row0, col0);
  }
}

}  // namespace detail
}  // namespace flexjit

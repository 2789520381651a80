// flexjit: how kernel templates read a generated Mods (docs/design.md, "The Mods contract"). The
// required members (Params, kHasMask, kHasScoreMod, kHasSink, mask, score, sink, classify,
// kv_range) are used directly; the optional ones (Cta, block lists, tile map, q_range, ...) are
// detected here, so that hand-written Mods in tests may leave them out.
#pragma once

namespace flexjit {
namespace detail {

template <class...>
struct VoidT { using type = void; };

// Trait<M>::value: the Mods' flag `member` when it declares one, false otherwise.
#define FLEXJIT_OPTIONAL_MODS_FLAG(Trait, member)                  \
  template <class M, class = void>                                \
  struct Trait {                                                  \
    static constexpr bool value = false;                          \
  };                                                              \
  template <class M>                                              \
  struct Trait<M, typename VoidT<decltype(M::member)>::type> {    \
    static constexpr bool value = M::member;                      \
  };

// Mods::kHasBlockList: the Mods walks block lists (top-k).
FLEXJIT_OPTIONAL_MODS_FLAG(BlockListOf, kHasBlockList)


// Mods::kHasTileMap: the Mods can be driven by a built tile map (templates/common/tile_map.cuh).
FLEXJIT_OPTIONAL_MODS_FLAG(TileMapOf, kHasTileMap)

// Mods::kScoreAnywhere: score() may run on scores the mask drops (it reads no tensor per score),
// so logits compute it unconditionally and select, without a branch per element.
FLEXJIT_OPTIONAL_MODS_FLAG(ScoreAnywhereOf, kScoreAnywhere)
#undef FLEXJIT_OPTIONAL_MODS_FLAG

// Mods::kTokenList: each query row attends to the keys of its token list (TokenIndices), through
// Mods::token_list_length and token_list_entry; the decode kernel alone serves it. A function
// rather than a flag trait: NVRTC writes an instantiated trait's static member into the PTX, and
// the PTX of programs without token lists stays as it was. token_list_of<M>(0).
template <class M>
__host__ __device__ constexpr auto token_list_of(int) -> decltype(static_cast<bool>(M::kTokenList)) {
  return M::kTokenList;
}
template <class M>
__host__ __device__ constexpr bool token_list_of(long) {
  return false;
}

// What mask() and score() take first: Mods::Cta when the Mods declares one (values computed once
// per CTA by Mods::cta(p, b, h), the Params inside), else the Params themselves.
template <class M, class = void>
struct CtaOf {
  using type = const typename M::Params&;
  __device__ static type make(const typename M::Params& p, int, int) { return p; }
};
template <class M>
struct CtaOf<M, typename VoidT<typename M::Cta>::type> {
  using type = typename M::Cta;
  __device__ static type make(const typename M::Params& p, int b, int h) { return M::cta(p, b, h); }
};

// Mods::q_range(p, b, h, k0, k1, Tq, &lo, &hi) when the Mods declares it: the queries that reach a
// key tile, for the backward pass. Absent (hand-written Mods), every query of [0, Tq).
template <class M, class = void>
struct QRangeOf {
  static constexpr bool value = false;
  __device__ static void get(const typename M::Params&, int, int, int, int, int Tq, int* lo, int* hi) {
    *lo = 0;
    *hi = Tq;
  }
};
template <class M>
struct QRangeOf<M, typename VoidT<decltype(&M::q_range)>::type> {
  static constexpr bool value = true;
  __device__ static void get(const typename M::Params& p, int b, int h, int k0, int k1, int Tq, int* lo, int* hi) {
    M::q_range(p, b, h, k0, k1, Tq, lo, hi);
  }
};

}  // namespace detail
}  // namespace flexjit

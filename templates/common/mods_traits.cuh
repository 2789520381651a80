// flexjit: how kernel templates read a generated Mods (docs/design.md, "The Mods contract"). The
// required members (Params, kHasMask, kHasScoreMod, kHasSink, mask, score, sink, classify,
// kv_range) are used directly; the optional ones are detected here, so that hand-written Mods in
// tests may leave them out.
#pragma once

namespace flexjit {
namespace detail {

// Mods::kHasBlockList when the Mods declares it, false otherwise (hand-written Mods predate it).
template <class...>
struct VoidT { using type = void; };
template <class M, class = void>
struct BlockListOf { static constexpr bool value = false; };
template <class M>
struct BlockListOf<M, typename VoidT<decltype(M::kHasBlockList)>::type> { static constexpr bool value = M::kHasBlockList; };
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

// Mods::kHasTileMap likewise: the Mods can be driven by a built tile map (templates/common/tile_map.cuh).
template <class M, class = void>
struct TileMapOf { static constexpr bool value = false; };
template <class M>
struct TileMapOf<M, typename VoidT<decltype(M::kHasTileMap)>::type> { static constexpr bool value = M::kHasTileMap; };

// Mods::kScoreAnywhere likewise: score() may run on scores the mask drops (it reads no tensor per
// score), so logits compute it unconditionally and select, without a branch per element.
template <class M, class = void>
struct ScoreAnywhereOf { static constexpr bool value = false; };
template <class M>
struct ScoreAnywhereOf<M, typename VoidT<decltype(M::kScoreAnywhere)>::type> { static constexpr bool value = M::kScoreAnywhere; };

}  // namespace detail
}  // namespace flexjit

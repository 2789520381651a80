#pragma once
// The queries that reach a key tile, in closed form, derived from the mask: the backward pass
// walks, per kv tile, only the query tiles that attend to it (no block mask, no O(T^2) pass). For a
// tile of keys [k_lo, k_hi] (inclusive) every query whose mask is true for some kv of the tile
// lies in [lo, hi): a conservative hull, clamped to [0, Tq]. lo >= hi means nothing.
//
// kv_range transposed: the same solver (compiler/index_range.hpp) solves the mask for q_idx over
// a tile of kv_idx, so the same atoms bound (causal: [k_lo, Tq); a window w: [k_lo, k_hi + w);
// sinks: every query for the tiles holding a sink key).
#include "compiler/index_range.hpp"

namespace flexjit::compiler {

// The free variables of a QRange besides b, h and the program's runtime scalars: Int Vars of
// VarKind::Tile with these names. The kernel binds k_lo = k0, k_hi = k1 - 1 and Tq.
inline constexpr const char* kQRangeKvLo = "k_lo";
inline constexpr const char* kQRangeKvHi = "k_hi";
inline constexpr const char* kQRangeTq = "Tq";

inline constexpr RangeAxes kQRangeAxes{ir::kParamQ, ir::kParamKv, kQRangeKvLo, kQRangeKvHi, kQRangeTq};

using QRange = IndexRange;  // lo, hi clipped into [0, Tq]

// Simplified bounds.
QRange q_range(const ir::Program& p);

// Whether r is trivially [0, Tq): the kernel can skip the range computation.
bool q_range_is_full(const QRange& r);

}  // namespace flexjit::compiler

#pragma once
// The two directions compiler/index_range.hpp solves a mask in, in closed form (no block mask, no
// O(T^2) pass), each a conservative hull clamped to its extent (lo >= hi means nothing):
//   kv_range: the keys a query tile [q_lo, q_hi] may attend to, in [0, Tkv). The forward and
//     decode visit only those key tiles (and still classify each one).
//   q_range: the queries that reach a key tile [k_lo, k_hi], in [0, Tq). The backward walks only
//     those query tiles (causal: [k_lo, Tq); a window w: [k_lo, k_hi + w); sinks: every query for
//     the tiles holding a sink key).
// The solver says which atoms of the mask bound the index (windows, causal, sinks, chunks,
// prefixes, float bounds) and which do not.
#include "compiler/index_range.hpp"

namespace flexjit::compiler {

// The free variables of a range besides b, h and the program's runtime scalars: Int Vars of
// VarKind::Tile with these names (never a program's name: the kind keeps them apart). The kernel
// binds a tile's first and last index (inclusive) and the extent.
inline constexpr const char *kKvRangeQLo = "q_lo", *kKvRangeQHi = "q_hi", *kKvRangeTkv = "Tkv";
inline constexpr const char *kQRangeKvLo = "k_lo", *kQRangeKvHi = "k_hi", *kQRangeTq = "Tq";
inline constexpr RangeAxes kKvRangeAxes{ir::kParamKv, ir::kParamQ, kKvRangeQLo, kKvRangeQHi, kKvRangeTkv};
inline constexpr RangeAxes kQRangeAxes{ir::kParamQ, ir::kParamKv, kQRangeKvLo, kQRangeKvHi, kQRangeTq};

using KvRange = IndexRange;  // lo, hi clipped into [0, Tkv]
using QRange = IndexRange;   // lo, hi clipped into [0, Tq]

// Simplified bounds, and whether they are trivially the whole extent (the kernel can skip them).
inline KvRange kv_range(const ir::Program& p) { return index_range(p, kKvRangeAxes); }
inline QRange q_range(const ir::Program& p) { return index_range(p, kQRangeAxes); }
inline bool kv_range_is_full(const KvRange& r) { return index_range_is_full(r, kKvRangeAxes); }
inline bool q_range_is_full(const QRange& r) { return index_range_is_full(r, kQRangeAxes); }

}  // namespace flexjit::compiler

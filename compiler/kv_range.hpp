#pragma once
// The keys a query tile may attend to, in closed form, derived from the mask (no block mask, no
// O(T^2) pass). For a tile of queries [q_lo, q_hi] (inclusive) every kv whose mask is true for
// some q of the tile lies in [lo, hi): a conservative hull, clamped to [0, Tkv]. lo >= hi means
// nothing. The kernel visits only those key tiles (and still classifies each one).
//
// Solved by compiler/index_range.hpp, which says which atoms of the mask bound the keys (windows,
// causal, sinks, chunks, prefixes, float bounds) and which do not.
#include "compiler/index_range.hpp"

namespace flexjit::compiler {

// The free variables of a KvRange besides b, h and the program's runtime scalars: Int Vars of
// VarKind::Tile with these names (never a program's name: the kind keeps them apart). The kernel
// binds q_lo = q0, q_hi = q1 - 1 and Tkv.
inline constexpr const char* kKvRangeQLo = "q_lo";
inline constexpr const char* kKvRangeQHi = "q_hi";
inline constexpr const char* kKvRangeTkv = "Tkv";

inline constexpr RangeAxes kKvRangeAxes{ir::kParamKv, ir::kParamQ, kKvRangeQLo, kKvRangeQHi, kKvRangeTkv};

using KvRange = IndexRange;  // lo, hi clipped into [0, Tkv]

// Simplified bounds.
KvRange kv_range(const ir::Program& p);

// Whether r is trivially [0, Tkv): the kernel can skip the range computation.
bool kv_range_is_full(const KvRange& r);

}  // namespace flexjit::compiler

#pragma once
// The keys a query tile may attend to, in closed form, derived from the mask (no block mask, no
// O(T^2) pass). For a tile of queries [q_lo, q_hi] (inclusive) every kv whose mask is true for
// some q of the tile lies in [lo, hi): a conservative hull, clamped to [0, Tkv]. lo >= hi means
// nothing. The kernel visits only those key tiles (and still classifies each one).
//
// Atoms that are linear in kv_idx with coefficient +-1 (q - kv < w, q >= kv, kv < 4) or a floor
// division of such a form by a positive constant (q // C == kv // C) give bounds whose q side is
// monotone in q_idx, so its extreme over the tile is at q_lo or q_hi. And intersects, Or takes
// the hull, Not is pushed through; anything else (%, !=, reads at query or key positions, ...)
// bounds nothing. The kv-free side may read tensors at b, h, runtime scalars and constants
// (`kv_idx < prefix_len[b]`, a rank-0 tensor): the kernel reads them per tile, in range by the
// caller's contract on indices.
// The mask is solved with its lets substituted: helper variables and subexpressions that CSE
// shared read as the expression written out.
//
// An Int converted to float and compared with a float constant is solved exactly
// (compiler/int_float_compare.hpp); against a float known per tile (a float scalar, an element
// read per (b, h)) or another converted Int, as Ints where that side is below 2^24 in magnitude
// (a Select on that), every key elsewhere. The float may depend on the query when it is
// monotone in q_idx (Ints converted to float, + -, * or / by a finite nonzero constant:
// `kv_idx < q_idx * 0.5 + 3.0`); the guard is then on its values at both ends of the tile. An atom without kv_idx that reads no tensor at a query
// position (q_idx < 5, h >= 2, q_idx < prefix_len[b], a bool scalar) is every key or none per
// tile: a Select on whether some query of the tile may satisfy it, from its sides' extremes.
//
// Assumes the mask's Int arithmetic and the bounds' own do not wrap around (positions < 2^31 and
// runtime scalars well inside int64), since the derivation solves the atoms over the integers.
#include "ir/ir.hpp"

namespace flexjit::compiler {

// The free variables of a KvRange besides b, h and the program's runtime scalars: Int Vars of
// VarKind::Tile with these names (never a program's name: the kind keeps them apart). The kernel
// binds q_lo = q0, q_hi = q1 - 1 and Tkv.
inline constexpr const char* kKvRangeQLo = "q_lo";
inline constexpr const char* kKvRangeQHi = "q_hi";
inline constexpr const char* kKvRangeTkv = "Tkv";

struct KvRange {
  ir::Expr lo, hi;  // Int, clipped into [0, Tkv]
  // The same bounds before clipping, for display (null when unbounded on that side).
  ir::Expr unclipped_lo{}, unclipped_hi{};
};

// Simplified bounds.
KvRange kv_range(const ir::Program& p);

// Whether r is trivially [0, Tkv): the kernel can skip the range computation.
bool kv_range_is_full(const KvRange& r);

}  // namespace flexjit::compiler

#pragma once
// One solver for the closed-form index ranges of a mask, in either direction
// (compiler/tile_ranges.hpp): the keys a tile of queries may attend to (kv_range, the forward), or
// the queries that attend to some key of a tile of keys (q_range, the backward). The mask is
// symmetric in what the solver needs: it solves for one index (the unknown) while the other (the
// tile index) ranges over an inclusive tile [lo, hi], and gives a conservative hull [lo, hi) of
// the unknown, clamped to [0, extent]. lo >= hi means nothing.
//
// An atom is one comparison of Ints (or of Ints converted to float) in the mask with its lets
// substituted (ir::inline_lets: helper variables and subexpressions that CSE shared read as the
// expression written out); And, Or, Not, Select and bool() combine atoms. Atoms that bound:
// - linear in the unknown with coefficient +-1 (q - kv < w, q >= kv, kv < 4), or in unknown // C,
//   or a floor division of such a form by a positive constant (q // C == kv // C), or abs() of one
//   (abs(q - kv) <= w). Their other side is monotone in the tile index (+ -, * and // by constants,
//   min / max), so its extreme over the tile is at one of the tile's ends.
// - Ints converted to float against a float constant: exactly (compiler/int_float_compare.hpp);
//   against a float known per tile (a float scalar, an element read per (b, h)) or another
//   converted Int, as Ints where that side is below 2^24 in magnitude (a Select on that), the
//   whole extent elsewhere. That float may depend on the tile index when it is monotone in it
//   (Ints converted to float, + -, * or / by a finite nonzero constant: `kv_idx < q_idx * 0.5 + 3.0`);
//   the guard is then on its values at both ends of the tile.
// - an atom without the unknown that reads no tensor at the tile index (q_idx < 5, h >= 2,
//   q_idx < prefix_len[b], a bool scalar): all of the extent or nothing per tile, a Select on
//   whether some index of the tile may satisfy it, from its sides' extremes.
// Anything else (%, !=, reads at the unknown's or the tile index's positions, ...) bounds nothing.
// The side free of the unknown may read tensors at b, h, runtime scalars and constants
// (`kv_idx < prefix_len[b]`, a rank-0 tensor): the kernel reads them per tile, in range by the
// caller's contract on indices.
//
// Assumes the mask's Int arithmetic and the bounds' own do not wrap around (positions < 2^31 and
// runtime scalars well inside int64), since the derivation solves the atoms over the integers.
#include "ir/ir.hpp"

namespace flexjit::compiler {

// The names a direction solves with. The unknown and the tile index are mod parameters
// (ir::kParamQ, ir::kParamKv); the tile's ends and the extent are Int Vars of VarKind::Tile
// (never a program's name: the kind keeps them apart), bound by the kernel.
struct RangeAxes {
  const char* unknown;     // the index solved for
  const char* tile_index;  // the index ranging over the tile
  const char* tile_lo;     // the tile's first index
  const char* tile_hi;     // the tile's last index (inclusive)
  const char* extent;      // the unknown's upper end (Tkv, Tq)
};

struct IndexRange {
  ir::Expr lo, hi;  // Int, clipped into [0, extent]
  // The same bounds before clipping, for display (null when unbounded on that side).
  ir::Expr unclipped_lo{}, unclipped_hi{};
};

// Simplified bounds of the unknown over the tile, from p's mask_mod; [0, extent) without one.
IndexRange index_range(const ir::Program& p, const RangeAxes& axes);

// Whether r is trivially [0, extent): the kernel can skip the range computation.
bool index_range_is_full(const IndexRange& r, const RangeAxes& axes);

}  // namespace flexjit::compiler

#pragma once
// Tile classification from the mask itself: for one (query tile, key tile) pair of one (b, h) and
// the call's runtime scalars, interval analysis (bounds.hpp) proves the mask false everywhere
// (Empty: the kernel skips the tile), true everywhere (Full: the kernel skips mask_mod) or neither
// (Partial). Anything unproven is Partial: imprecise is allowed, wrong never.
//
// The generated Mods::classify runs the same analysis on the GPU (templates/common/interval.cuh); this is
// the host copy, for tests, tools and launch-time decisions.
#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "ir/bounds.hpp"
#include "ir/ir.hpp"

namespace flexjit::compiler {

// Same numbering as the kernel templates (attention_common.cuh: EMPTY = 0, FULL = 1, PARTIAL = 2).
enum class TileClass { Empty = 0, Full = 1, Partial = 2 };
const char* tile_class_name(TileClass c);  // "empty", "full", "partial"

using ScalarValue = std::variant<std::int64_t, double, bool>;

// Queries [q0, q1) x keys [k0, k1) of batch b, head h. Rows at or past Tq and keys at or past Tkv
// are masked by the kernel itself, so they are left out of the analysis.
struct TileQuery {
  std::int64_t b = 0, h = 0;
  std::int64_t q0 = 0, q1 = 0;
  std::int64_t k0 = 0, k1 = 0;
  std::int64_t Tq = 0, Tkv = 0;
  std::map<std::string, ScalarValue> scalars;  // runtime scalar values by name (missing: unknown)
  // The element of each rank-0 captured tensor by name (`offset = torch.tensor(5)`), as the call
  // binds it (missing: its dtype's range). Float elements are not analysed.
  std::map<std::string, ScalarValue> rank0_tensors;
};

// Block-sparse BlockIndices do not take part: this is the element mask only. No mask_mod: Full.
// A tile with no row below Tq or no key below Tkv is Empty.
TileClass classify_tile(const ir::Program& p, const TileQuery& t);

// The class of a mask's BoolInterval over a tile.
TileClass tile_class_of(BoolInterval mask);

}  // namespace flexjit::compiler

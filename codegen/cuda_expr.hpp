#pragma once
// IR -> CUDA C++ for the generated Mods: values (mask, score, sink, kv range bounds) and
// interval bounds (the per-tile classifier, mirroring ir/bounds.cpp node for node with
// the primitives of templates/common/interval.cuh). Let nodes (shared subexpressions) become named
// `const` locals; everything else is emitted inline, fully parenthesized.
#include <functional>
#include <map>
#include <string>

#include "codegen/cuda_writer.hpp"
#include "compiler/target.hpp"
#include "ir/bounds.hpp"
#include "ir/ir.hpp"

namespace flexjit::codegen {

// How a variable is spelled in generated code: given the Var, returns a C++ expression.
using VarSpelling = std::function<std::string(const ir::Var&)>;

const char* cuda_type(ir::Type t);  // "bool", "long long", "float"

// Subexpressions (by node identity) already computed elsewhere, and how to spell them.
using Precomputed = std::map<const ir::Node*, std::string>;

// Returns a C++ expression computing e; Let bindings are written to w as statements first.
// `ranges` (the plan's int_ranges) says which Int operations are exact in 32 bits; `math` how
// float operations are spelled (codegen/float_math.hpp).
std::string emit_value(const ir::Expr& e, CudaWriter& w, const VarSpelling& vars, const ir::IntRanges& ranges,
                       compiler::MathMode math, const Precomputed* done = nullptr);

// How the bounds of a load from a captured tensor are taken:
//   DtypeRange: any value of its dtype (what the host analysis assumes; per-tile classify).
//   ReadBoxes:  the min / max of the values over the box of indices the tile reaches, read by the
//               whole warp (templates/common/tile_map.cuh); the generated code then needs `x`, the
//               Mods::Extents of the captures, and must run warp-uniformly.
enum class BoundsLoads { DtypeRange, ReadBoxes };

// Writes statements computing the interval of Bool expression e and returns the name of the
// resulting flexjit::BoolInterval. `vars` spells each Int/Bool variable's interval.
std::string emit_bool_bounds(const ir::Expr& e, CudaWriter& w, const VarSpelling& vars,
                             BoundsLoads loads = BoundsLoads::DtypeRange);

}  // namespace flexjit::codegen

#pragma once
// IR -> CUDA C++ for the generated Mods: values (mask, score, sink, kv range bounds) and
// interval bounds (the per-tile classifier, mirroring compiler/bounds.cpp node for node with
// the primitives of templates/interval.cuh). Let nodes (shared subexpressions) become named
// `const` locals; everything else is emitted inline, fully parenthesized.
#include <functional>
#include <map>
#include <string>

#include "compiler/cuda_writer.hpp"
#include "compiler/ir.hpp"

namespace flexjit::compiler {

// How a variable is spelled in generated code: given the Var, returns a C++ expression.
using VarSpelling = std::function<std::string(const ir::Var&)>;

const char* cuda_type(ir::Type t);  // "bool", "long long", "float"

// Returns a C++ expression computing e; Let bindings are written to w as statements first.
std::string emit_value(const ir::Expr& e, CudaWriter& w, const VarSpelling& vars);

// Writes statements computing the interval of Bool expression e and returns the name of the
// resulting flexjit::BoolInterval. `vars` spells each Int/Bool variable's interval.
std::string emit_bool_bounds(const ir::Expr& e, CudaWriter& w, const VarSpelling& vars);

}  // namespace flexjit::compiler

#pragma once
// How deep an expression is once every let is inlined: the depth the recursive passes (simplify,
// CSE, the emitters, the interpreter) will walk. Computed without recursion, so it is safe on
// any input, and used to refuse programs too deep for those passes before they run.
#include <cstddef>

#include "ir/ir.hpp"

namespace flexjit::ir {

// Nesting depth of e with let-bound names replaced by their values (a leaf is 1). Linear in the
// shared graph.
std::size_t inlined_depth(const Expr& e);

}  // namespace flexjit::ir

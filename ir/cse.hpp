#pragma once
// Common-subexpression elimination: a subexpression that occurs more than once (anything but a
// Var or a constant) is computed once into a Let named t0, t1, ... (numbered in evaluation
// order, inner subexpressions first, skipping names already used in e), so
//   doc[q_idx] == doc[kv_idx] && doc[q_idx] >= 0
// becomes
//   let t0 = doc[q_idx] in
//   t0 == doc[kv_idx] && t0 >= 0
//
// Lets are placed at the root of the innermost "guard region" (the whole expression, the right
// side of && / ||, a select arm) that holds every occurrence. An expression containing a Load
// is only shared where it would be evaluated anyway: it is never hoisted out of a guard, so
// `kv_idx < n && doc[kv_idx] > 0` keeps its protection. Existing Lets in e are inlined first.
// Deterministic: the same input always gives the same output.
#include <string>

#include "ir/ir.hpp"

namespace flexjit::ir {

Expr common_subexpressions(const Expr& e, const std::string& prefix = "t");

}  // namespace flexjit::ir

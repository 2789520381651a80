#pragma once
// Let substitution: every let-bound variable replaced by its value, so that a pattern-matching
// analysis sees `abs(q_idx - kv_idx) <= w` whether the program wrote the expression once, bound
// it to a helper variable, or had it shared by CSE (`let t0 = abs(q_idx - kv_idx) in ...`).
// The result is a DAG: each value is one shared node however often it is used, so the pass is
// linear in the graph, and walks over its result must be memoized to stay so.
#include "ir/ir.hpp"

namespace flexjit::ir {

Expr inline_lets(const Expr& e);

}  // namespace flexjit::ir

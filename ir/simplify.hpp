#pragma once
// The simplifier: constant folding with the interpreter's exact semantics (it calls eval_*),
// algebraic identities, canonical forms and dead-code removal, repeated to a fixpoint.
//
// Guarantees, for every environment in which `e` evaluates without an error:
//   evaluate(simplify(e)) is identical to evaluate(e): bit-exact, any NaN matching any NaN.
// The simplified expression never evaluates a Load that `e` would not (it may drop some).
//
// Assumptions (documented contract, relied on by range-based rewrites only): the parameters
// b, h, q_idx, kv_idx lie in [0, 2^31), and a load from an integer tensor lies in its dtype's
// range. Rewrites such as (x + c1) < c2 -> x < c2 - c1, which Int wrap-around would break, are
// applied only when these ranges prove x + c1 cannot overflow.
//
// Float rewrites are restricted to bit-exact ones (x * 1.0, x / 1.0, x - 0.0, x + -0.0,
// x ** 0.0, -(-x), ...). In particular x + 0.0 -> x is NOT done: it turns -0.0 into +0.0,
// which 1 / x or rsqrt would then expose; keeping every rewrite exact is what lets the
// property tests and GPU tests compare bit for bit against the unsimplified program.
//
// Canonical forms produced: constants on the right of commutative Int operators and of
// comparisons; x - c rather than x + (-c) for Int; bool(x) as x != 0; !(a < b) as a >= b (Int,
// Bool); select with Bool constant arms as && / ||.
#include "ir/ir.hpp"

namespace flexjit::ir {

Expr simplify(const Expr& e);

}  // namespace flexjit::ir

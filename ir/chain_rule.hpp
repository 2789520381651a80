#pragma once
// The chain rule of one IR node: how the derivative of a result with respect to a node (its
// adjoint) flows into one of the node's Float operands. ir/differentiate.hpp walks the DAG and
// sums these contributions; this file holds the calculus, one case per operation.
//
// Conventions, for a Float node e and its Float operand number `operand` (children() order):
//   - the result is adjoint * d e / d operand, built from e's own operands (and e itself where
//     that shares work: d exp(x) = exp(x)), so it is safe to evaluate wherever e is evaluated;
//   - an undefined Expr means the partial derivative is zero everywhere it exists: floor, ceil,
//     float // (piecewise constant); callers then add nothing;
//   - at a kink the derivative of the branch the interpreter takes: min / max follow fminf /
//     fmaxf (a NaN operand loses, a tie goes to the left operand), abs(x) takes +1 at x == 0;
//     a select arm gets the adjoint unchanged (which arm runs is the caller's business).
// Operations without a derivative throw flexjit::UnsupportedError naming the operation and the
// line of the program it came from.
#include <cstddef>

#include "ir/ir.hpp"

namespace flexjit::ir {

// `what` names the mod in error messages ("score_mod"). Called only for operands that vary with
// the variables differentiated for: that is what makes x ** y refuse a varying y.
Expr chain_rule(const Expr& e, std::size_t operand, const Expr& adjoint, const char* what);

}  // namespace flexjit::ir

#pragma once
// Derivatives of a mod, as IR: what a backward pass evaluates next to the forward mods.
//
// For a Float mod (score_mod, sink) it builds
//   - d body / d score: the derivative with respect to the score parameter, and
//   - for every place the body reads a float captured tensor (a Load node of a float dtype), the
//     derivative with respect to the element read there, with the load's indices and the
//     condition under which the load is evaluated at all.
// A backward multiplies dS_ij by d_score (for dQ, dK) and scatter-adds dS_ij * derivative into
// the tensor's gradient at the load's indices, for each load where `reached` holds. Two loads of
// the same element are two entries; their scatter-adds sum to the element's gradient.
//
// Every expression is over the mod's own parameters, scalars and tensors, so the interpreter
// evaluates it with the same Env as the mod. Derivatives and conditions are simplified and their
// common subexpressions shared (ir/simplify.hpp, ir/cse.hpp).
//
// The calculus is in ir/chain_rule.hpp: + - * / neg, exp exp2 log log2 log1p sqrt rsqrt tanh
// sigmoid sin cos tan erf, x ** c for an exponent that does not depend on the variables, min, max,
// abs and where (the branch taken), float // and % (a.e.), casts (int and bool parts are
// constants: comparisons, indices, int -> float give no derivative). Runtime float scalars are
// constants. Anything else throws flexjit::UnsupportedError naming the operation and its line.
//
// The pass is reverse-mode accumulation on the shared DAG: the lets are inlined (one node per
// value), each node's adjoint is the sum of its parents' contributions, visited once in
// topological order, so the cost is linear in the DAG for any number of loads.
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace flexjit::ir {

struct LoadDerivative {
  std::string tensor;         // the captured tensor read
  DType dtype;                // a float dtype
  std::vector<Expr> indices;  // Int, where it was read (meaningful where `reached` holds)
  Expr derivative;            // Float: d body / d tensor[indices] at this load; 0 where not reached
  Expr reached;               // Bool: the body evaluates this load (along a path that carries a derivative)
  SourcePos pos;              // the load in the program text
};

struct ModDerivatives {
  Expr d_score;                      // Float; the constant 0 when the body does not read the score
  std::vector<LoadDerivative> loads; // in the order a depth-first walk of the body first meets them
};

// Throws flexjit::UnsupportedError for a body it cannot differentiate; InternalError for a
// Bool mod (mask_mod has no derivative).
ModDerivatives differentiate(const Mod& mod);

}  // namespace flexjit::ir

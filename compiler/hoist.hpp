#pragma once
// Per-CTA values: subexpressions of mask_mod and score_mod that depend only on b, h and runtime
// scalars (one CTA has one (b, h)) and are costly (a tensor load, an intrinsic call, a division or
// a power). The kernel evaluates the mods per element inside unrolled, branchy code where the
// CUDA compiler does not merge or hoist such computations (ALiBi's `2 ** (-8 * (h + 1) / H)` was
// evaluated once per score), so the generator computes them once per CTA instead.
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace flexjit::compiler {

struct CtaValue {
  ir::Expr expr;      // the subexpression, shared with the mod body (matched by node identity)
  std::string field;  // "hz0", "hz1", ... in the generated Mods::Cta
  bool from_mask = false;  // part of mask_mod, whose float arithmetic stays exact (MathMode)
};

// Maximal hoistable subexpressions of `body`, appended to `out` (fields numbered on from its
// size). Not hoisted: anything that reads a Let bound outside it, and loads in positions that only
// run under a condition (the right side of and / or, an arm of a conditional), whose indices may
// be out of range when the condition is false.
void find_cta_values(const ir::Expr& body, std::vector<CtaValue>& out);

}  // namespace flexjit::compiler

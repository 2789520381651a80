#pragma once
// Which captured tensors a backward can give a gradient: the float tensors that score_mod or sink
// reads. Integer and bool tensors, block lists and tensors only mask_mod reads have none (a mask
// is piecewise constant). A float tensor read only where no derivative flows (say, inside a
// comparison) still qualifies: its gradient is zero.
#include <set>
#include <string>

#include "ir/ir.hpp"

namespace flexjit::ir {

// The names, in name order.
std::set<std::string> gradient_captures(const Program& p);

// Whether `mod` (when the program has it) reads the tensor `name`.
bool mod_reads(const std::optional<Mod>& mod, const std::string& name);

}  // namespace flexjit::ir

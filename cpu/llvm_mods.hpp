#pragma once
// Internal to the LLVM back end (includes LLVM headers; never include it from a public header).
// Builds the native functions of llvm_functions.hpp into an LLVM module.
#include <cstdint>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "cpu/llvm_functions.hpp"
#include "ir/differentiate.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu::detail {

// Defines kMaskFn .. kScoreRowFn in m.
void build_mod_functions(llvm::Module& m, const ir::Program& p);
// Defines kSlopeRowFn for `slope` (unless it is undefined) and load_row_function_name(i) for
// loads[i], over decls' scalars and captures.
void build_gradient_functions(llvm::Module& m, const ir::Program& decls, const ir::Expr& slope,
                              const std::vector<ir::LoadDerivative>& loads);
// Defines an ExprFn called `name` in m for e over decls' scalars and captures.
void build_expr_function(llvm::Module& m, const ir::Program& decls, const ir::Expr& e, const std::string& name);

}  // namespace flexjit::cpu::detail

#pragma once
// AST -> IR: name resolution, declarations (captures, runtime scalars, constants, block
// indices), inlining of functions, factories, lambdas and mask combinators, Python's typing
// rules, and the checks that make mask_mod/score_mod/sink well-formed. Reports the user's
// mistakes as CompileError at the offending token.
#include "ir/ir.hpp"
#include "dsl/ast.hpp"
#include "dsl/source.hpp"

namespace flexjit::compiler {

ir::Program lower(const dsl::SourceFile& file, const dsl::ast::Module& module);

}  // namespace flexjit::compiler

#pragma once
// Which top-level statements of a program its mods reach. Published FlexAttention files carry
// module-level code no mod uses (imports of other modules, tensors built for a test, helpers of
// the host side); lowering runs only the statements that define a name the entry points
// (mask_mod, score_mod, sink) need, transitively, so that such code is skipped instead of
// refused. Everything was parsed, so a syntax error anywhere is still an error.
//
// A statement is kept when:
//   - it defines a needed name (def, assignment, import, `x += ...`, `f.__name__ = ...`), or a
//     top-level `if` assigns one (lowering then says why that is not supported);
//   - it declares a runtime scalar, captured tensor or block indices (the call's contract);
//   - it is a decorator of a kept def;
//   - it is an assert on needed names only;
//   - it is a `return` (Python refuses a file with one outside a function);
//   - it is a `from m import *`, or a statement flexjit does not run (a class, a loop), and a
//     needed name is defined nowhere else and is no builtin: it may come from there.
// The needed names start as the entry points and grow by the free names of every kept statement.
#include <string>
#include <vector>

#include "dsl/ast.hpp"

namespace flexjit::compiler {

struct TopLevelReach {
  std::vector<bool> kept;  // per statement of the module body
};

TopLevelReach reach_top_level(const dsl::ast::Module& module);

// What a skipped statement was, for `flexjit check -v`: "import random", "def helper",
// "x = ...", "expression".
std::string describe_statement(const dsl::ast::Stmt& s);

}  // namespace flexjit::compiler

#pragma once
// DSL text -> AST. Throws CompileError (file:line:col, source line, caret, what was expected)
// on the first syntax error. Only grammar.cpp instantiates the Spirit X3 grammar.
#include <string>

#include "dsl/ast.hpp"
#include "dsl/diagnostics.hpp"
#include "dsl/source.hpp"

namespace flexjit::dsl {

ast::Module parse(const SourceFile& file);

// A compact, deterministic rendering of the AST as S-expressions, one line per top-level
// statement, for golden tests and `flexjit emit ast`:
//   (def mask_mod (b h q_idx kv_idx) (return (cmp (name q_idx) >= (name kv_idx))))
// With positions, every node's head (and every parameter/keyword/attribute name) gets its
// line:col, e.g. (cmp@3:18 (name@3:12 q_idx) >= (name@3:21 kv_idx)).
std::string dump(const ast::Module& module);
std::string dump(const ast::Module& module, bool with_positions);
std::string dump(const ast::Expr& expr, bool with_positions = false);

}  // namespace flexjit::dsl

#pragma once
// Helpers shared by the DSL tests.
#include <string>

#include "dsl/parser.hpp"

namespace flexjit::dsl::test {

inline ast::Module parse_text(const std::string& text) { return parse(SourceFile("t.py", text)); }

// dump() of a whole program.
inline std::string dump_text(const std::string& text, bool positions = false) {
  return dump(parse_text(text), positions);
}

// The text as a single expression statement; returns its expression's dump (or the error).
inline std::string dump_expr(const std::string& text, bool positions = false) {
  try {
    ast::Module m = parse_text(text);
    if (m.body.size() != 1) return "<not one statement>";
    const auto* e = std::get_if<ast::ExprStmt>(&m.body.front()->node);
    if (!e) return "<not an expression statement>";
    return dump(*e->value, positions);
  } catch (const CompileError& err) {
    return err.what();
  }
}

// The formatted CompileError of parsing `text`, or "<no error>".
inline std::string error_of(const std::string& text) {
  try {
    parse_text(text);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace flexjit::dsl::test

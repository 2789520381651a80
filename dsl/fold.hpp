#pragma once
// Parse tree (pt::, what X3 synthesizes) -> AST (ast::). Folds operator chains, unwraps the
// one-element precedence levels, turns Python constructs flexjit lacks into Unsupported*
// nodes, converts byte offsets into SourcePos, and reports the syntax errors a context-free
// grammar cannot see (assignment targets, argument order, duplicate parameters).
#include <optional>
#include <utility>
#include <vector>

#include "dsl/ast.hpp"
#include "dsl/parse_tree.hpp"
#include "dsl/source.hpp"

namespace flexjit::dsl {

// Deepest expression tree the parser hands on (a + a + ... folds into a left-leaning tree;
// every later pass recurses over it).
inline constexpr int kMaxExprDepth = 1000;

class Folder {
 public:
  explicit Folder(const SourceFile& file) : file_(file) {}

  ast::ExprPtr expr(const pt::Expr& e);
  // One or more simple statements (`import a, b` gives one Import per module).
  void simple(const pt::SimpleX& s, ast::Block& out);
  // A def header: everything but the body.
  ast::FunctionDef def_header(const pt::DefX& d);
  ast::ExprPtr condition(const pt::CondX& c) { return expr(c.cond); }

  // Position of [begin, end): its first character, the length clamped to the first line.
  SourcePos pos(std::size_t begin, std::size_t end) const;
  SourcePos pos(const pt::Tagged& t) const { return pos(t.begin, t.end); }

 private:
  struct Folded {
    ast::ExprPtr expr;
    int depth;
  };

  Folded fold(const pt::Expr& e);
  Folded node(const pt::NameTok& t);
  Folded node(const pt::NumberTok& t);
  Folded node(const pt::StringTok& t);
  Folded node(const pt::ConstTok& t);
  Folded node(const pt::SkippedTok& t);
  Folded node(const pt::Chain& c);
  Folded node(const pt::UnaryX& u);
  Folded node(const pt::PrimaryX& p);
  Folded node(const pt::ParenX& p);
  Folded node(const pt::TernaryX& t);
  Folded node(const pt::LambdaX& l);
  Folded node(const pt::StarredX& s);
  Folded node(const pt::WalrusX& w);
  Folded list(const pt::ExprList& l);
  Folded tuple(SourcePos pos, const std::vector<pt::Expr>& items);
  std::optional<std::vector<std::pair<std::string, SourcePos>>> name_targets(const pt::ExprList& l);

  Folded make(SourcePos pos, int depth, decltype(ast::Expr::node) node);
  Folded unsupported(SourcePos pos, const char* what);
  std::vector<ast::Param> params(const std::vector<pt::ParamX>& ps);

  void expr_stmt(const pt::ExprStmtX& s, ast::Block& out);
  ast::StmtPtr stmt(SourcePos pos, decltype(ast::Stmt::node) node);

  const SourceFile& file_;
};

}  // namespace flexjit::dsl

// dump(): the AST as S-expressions (format documented in parser.hpp). Kept stable: golden
// tests compare against it.
#include <fmt/format.h>

#include "dsl/quoted.hpp"

#include "dsl/parser.hpp"

namespace flexjit::dsl {
namespace {

class Dumper {
 public:
  explicit Dumper(bool positions) : positions_(positions) {}

  std::string module(const ast::Module& m) {
    for (const auto& s : m.body) {
      stmt(*s);
      out_ += '\n';
    }
    return std::move(out_);
  }

  std::string expr_only(const ast::Expr& e) {
    expr(e);
    return std::move(out_);
  }

 private:
  // "(head" or "(head@line:col".
  void open(const char* head, const SourcePos& pos) {
    out_ += '(';
    out_ += head;
    at(pos);
  }
  void at(const SourcePos& pos) {
    if (positions_) out_ += fmt::format("@{}:{}", pos.line, pos.col);
  }
  void name(const std::string& id, const SourcePos& pos) {
    out_ += id;
    at(pos);
  }

  void quoted(const std::string& s) { out_ += dsl::quoted(s, '"'); }

  static std::string float_text(double v) {
    std::string s = fmt::format("{}", v);
    if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";  // 50 -> 50.0
    return s;
  }

  void block(const ast::Block& b) {
    for (const auto& s : b) {
      out_ += ' ';
      stmt(*s);
    }
  }

  void param(const ast::Param& p) {
    if (!p.annotation && !p.default_value) return name(p.name, p.pos);
    out_ += '(';
    name(p.name, p.pos);
    if (p.annotation) {
      out_ += " : ";
      expr(*p.annotation);
    }
    if (p.default_value) {
      out_ += " = ";
      expr(*p.default_value);
    }
    out_ += ')';
  }

  void params(const std::vector<ast::Param>& ps) {
    out_ += '(';
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (i) out_ += ' ';
      param(ps[i]);
    }
    out_ += ')';
  }

  void stmt(const ast::Stmt& s) {
    std::visit([&](const auto& n) { stmt_node(s.pos, n); }, s.node);
  }

  void stmt_node(const SourcePos& pos, const ast::FunctionDef& f) {
    open("def", pos);
    out_ += ' ';
    name(f.name, f.name_pos);
    out_ += ' ';
    params(f.params);
    if (f.returns) {
      out_ += " -> ";
      expr(*f.returns);
    }
    block(f.body);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::Assign& a) {
    open("assign", pos);
    out_ += ' ';
    name(a.target, a.target_pos);
    out_ += ' ';
    expr(*a.value);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::AnnAssign& a) {
    open("annassign", pos);
    out_ += ' ';
    name(a.target, a.target_pos);
    out_ += ' ';
    expr(*a.annotation);
    if (a.value) {
      out_ += ' ';
      expr(*a.value);
    }
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::AugAssign& a) {
    open("augassign", pos);
    out_ += ' ';
    name(a.target, a.target_pos);
    out_ += fmt::format(" {}= ", ast::spelling(a.op));
    expr(*a.value);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::Return& r) {
    open("return", pos);
    if (r.value) {
      out_ += ' ';
      expr(*r.value);
    }
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::If& i) {
    open("if", pos);
    out_ += ' ';
    expr(*i.cond);
    out_ += " (then";
    block(i.body);
    out_ += ')';
    if (!i.orelse.empty()) {
      out_ += " (else";
      block(i.orelse);
      out_ += ')';
    }
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::Pass&) {
    open("pass", pos);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::ExprStmt& e) {
    open("expr", pos);
    out_ += ' ';
    expr(*e.value);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::Import& i) {
    open("import", pos);
    out_ += ' ';
    name(i.module, i.module_pos);
    if (!i.alias.empty()) out_ += " as " + i.alias;
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::ImportFrom& i) {
    open("from", pos);
    out_ += ' ';
    name(i.module, i.module_pos);
    if (i.names.empty()) out_ += " *";
    for (const auto& n : i.names) {
      out_ += ' ';
      name(n.name, n.pos);
      if (!n.alias.empty()) out_ += " as " + n.alias;
    }
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::TupleAssign& a) {
    open("tupleassign", pos);
    for (const auto& [target, target_pos] : a.targets) {
      out_ += ' ';
      name(target, target_pos);
    }
    out_ += ' ';
    expr(*a.value);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::AttributeAssign& a) {
    open("attrassign", pos);
    out_ += ' ';
    expr(*a.object);
    out_ += ' ';
    name(a.attr, a.attr_pos);
    out_ += ' ';
    expr(*a.value);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::Assert& a) {
    open("assert", pos);
    out_ += ' ';
    expr(*a.cond);
    if (a.message) {
      out_ += ' ';
      expr(*a.message);
    }
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::Decorator& d) {
    open("decorator", pos);
    out_ += ' ';
    expr(*d.value);
    out_ += ')';
  }
  void stmt_node(const SourcePos& pos, const ast::UnsupportedStmt& u) {
    open("unsupported", pos);
    out_ += ' ';
    quoted(u.keyword);
    out_ += ')';
  }

  void expr(const ast::Expr& e) {
    std::visit([&](const auto& n) { expr_node(e.pos, n); }, e.node);
  }

  void expr_node(const SourcePos& pos, const ast::IntLit& n) {
    open("int", pos);
    out_ += fmt::format(" {})", n.value);
  }
  void expr_node(const SourcePos& pos, const ast::FloatLit& n) {
    open("float", pos);
    out_ += ' ' + float_text(n.value) + ')';
  }
  void expr_node(const SourcePos& pos, const ast::BoolLit& n) {
    open("bool", pos);
    out_ += n.value ? " True)" : " False)";
  }
  void expr_node(const SourcePos& pos, const ast::NoneLit&) {
    open("none", pos);
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::StringLit& n) {
    open("str", pos);
    out_ += ' ';
    quoted(n.value);
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Name& n) {
    open("name", pos);
    out_ += ' ' + n.id + ')';
  }
  void expr_node(const SourcePos& pos, const ast::Attribute& n) {
    open("attr", pos);
    out_ += ' ';
    expr(*n.value);
    out_ += ' ';
    name(n.attr, n.attr_pos);
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Unary& n) {
    open("unary", pos);
    out_ += fmt::format(" {} ", ast::spelling(n.op));
    expr(*n.operand);
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Binary& n) {
    open("bin", pos);
    out_ += ' ';
    expr(*n.lhs);
    out_ += fmt::format(" {} ", ast::spelling(n.op));
    expr(*n.rhs);
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::BoolChain& n) {
    open(ast::spelling(n.op), pos);
    for (const auto& v : n.values) {
      out_ += ' ';
      expr(*v);
    }
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Compare& n) {
    open("cmp", pos);
    out_ += ' ';
    expr(*n.first);
    for (const auto& [op, v] : n.rest) {
      out_ += fmt::format(" {} ", ast::spelling(op));
      expr(*v);
    }
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Ternary& n) {
    open("ternary", pos);
    out_ += ' ';
    expr(*n.then_value);
    out_ += " if ";
    expr(*n.cond);
    out_ += " else ";
    expr(*n.else_value);
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Lambda& n) {
    open("lambda", pos);
    out_ += ' ';
    params(n.params);
    out_ += ' ';
    expr(*n.body);
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Call& n) {
    open("call", pos);
    out_ += ' ';
    expr(*n.callee);
    for (const auto& a : n.args) {
      out_ += ' ';
      expr(*a);
    }
    for (const auto& k : n.keywords) {
      out_ += " (kw ";
      name(k.name, k.pos);
      out_ += ' ';
      expr(*k.value);
      out_ += ')';
    }
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Subscript& n) {
    open("index", pos);
    out_ += ' ';
    expr(*n.value);
    for (const auto& i : n.indices) {
      out_ += ' ';
      expr(*i);
    }
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::Tuple& n) {
    open("tuple", pos);
    for (const auto& i : n.items) {
      out_ += ' ';
      expr(*i);
    }
    out_ += ')';
  }
  void expr_node(const SourcePos& pos, const ast::UnsupportedExpr& n) {
    open("unsupported", pos);
    out_ += ' ';
    quoted(n.what);
    out_ += ')';
  }

  bool positions_;
  std::string out_;
};

}  // namespace

std::string dump(const ast::Module& module) { return Dumper(false).module(module); }
std::string dump(const ast::Module& module, bool with_positions) {
  return Dumper(with_positions).module(module);
}
std::string dump(const ast::Expr& expr, bool with_positions) {
  return Dumper(with_positions).expr_only(expr);
}

}  // namespace flexjit::dsl

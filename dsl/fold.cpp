// Parse tree -> AST (see fold.hpp).
#include "dsl/fold.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include "dsl/diagnostics.hpp"
#include "dsl/scan.hpp"

namespace flexjit::dsl {
namespace {

namespace x3 = boost::spirit::x3;

template <typename T>
const T& unwrap(const x3::forward_ast<T>& f) {
  return f.get();
}
template <typename T>
const T& unwrap(const T& t) {
  return t;
}

const pt::Tagged& tagged(const pt::Expr& e) {
  return boost::apply_visitor([](const auto& n) -> const pt::Tagged& { return unwrap(n); },
                              e.get());
}

std::optional<ast::BinOp> binop(std::string_view s) {
  using B = ast::BinOp;
  static constexpr std::pair<std::string_view, B> kOps[] = {
      {"+", B::Add},     {"-", B::Sub},      {"*", B::Mul},     {"/", B::Div},
      {"//", B::FloorDiv}, {"%", B::Mod},    {"**", B::Pow},    {"&", B::BitAnd},
      {"|", B::BitOr},   {"^", B::BitXor},   {"<<", B::Shl},    {">>", B::Shr},
      {"@", B::MatMul}};
  for (auto [text, op] : kOps)
    if (text == s) return op;
  return std::nullopt;
}

std::optional<ast::CmpOp> cmpop(std::string_view s) {
  using C = ast::CmpOp;
  static constexpr std::pair<std::string_view, C> kOps[] = {
      {"<", C::Lt}, {"<=", C::Le}, {">", C::Gt},        {">=", C::Ge},  {"==", C::Eq},
      {"!=", C::Ne}, {"is", C::Is}, {"is not", C::IsNot}, {"in", C::In}, {"not in", C::NotIn}};
  for (auto [text, op] : kOps)
    if (text == s) return op;
  return std::nullopt;
}

ast::UnOp unop(std::string_view s) {
  if (s == "-") return ast::UnOp::Neg;
  if (s == "+") return ast::UnOp::Pos;
  if (s == "~") return ast::UnOp::Invert;
  return ast::UnOp::Not;
}

bool is_tuple(const pt::ExprList& l) { return l.items.size() != 1 || l.trailing_comma; }

// What an expression is, for "cannot assign to ..." (Python's wording).
const char* describe(const ast::Expr& e) {
  return std::visit(
      [](const auto& n) -> const char* {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::IntLit> || std::is_same_v<T, ast::FloatLit> ||
                      std::is_same_v<T, ast::StringLit> || std::is_same_v<T, ast::BoolLit> ||
                      std::is_same_v<T, ast::NoneLit>)
          return "literal";
        else if constexpr (std::is_same_v<T, ast::Call>)
          return "function call";
        else if constexpr (std::is_same_v<T, ast::Compare>)
          return "comparison";
        else if constexpr (std::is_same_v<T, ast::Lambda>)
          return "lambda";
        else if constexpr (std::is_same_v<T, ast::Ternary>)
          return "conditional expression";
        else
          return "expression";
      },
      e.node);
}

}  // namespace

SourcePos Folder::pos(std::size_t begin, std::size_t end) const {
  const std::string& text = file_.text();
  begin = std::min(begin, text.size());
  end = std::max(std::min(end, text.size()), begin);
  std::size_t eol = text.find('\n', begin);
  if (eol == std::string::npos) eol = text.size();
  return file_.pos_at(begin, static_cast<int>(std::max<std::size_t>(std::min(end, eol) - begin, 1)));
}

Folder::Folded Folder::make(SourcePos pos, int depth, decltype(ast::Expr::node) node) {
  if (depth > kMaxExprDepth) user_error(file_, pos, "expression nested too deeply");
  return {std::make_shared<const ast::Expr>(ast::Expr{pos, std::move(node)}), depth};
}

Folder::Folded Folder::unsupported(SourcePos pos, const char* what) {
  return make(pos, 1, ast::UnsupportedExpr{what});
}

ast::ExprPtr Folder::expr(const pt::Expr& e) { return fold(e).expr; }

Folder::Folded Folder::fold(const pt::Expr& e) {
  return boost::apply_visitor([this](const auto& n) { return node(unwrap(n)); }, e.get());
}

Folder::Folded Folder::node(const pt::NameTok& t) { return make(pos(t), 1, ast::Name{t.id}); }

Folder::Folded Folder::node(const pt::NumberTok& t) {
  switch (t.kind) {
    case pt::NumberTok::Int: return make(pos(t), 1, ast::IntLit{t.int_value});
    case pt::NumberTok::Float: return make(pos(t), 1, ast::FloatLit{t.float_value});
    case pt::NumberTok::Imaginary: break;
  }
  return unsupported(pos(t), "complex literals");
}

Folder::Folded Folder::node(const pt::StringTok& t) {
  if (t.fstring) return unsupported(pos(t), "f-strings");
  return make(pos(t), 1, ast::StringLit{t.value});
}

Folder::Folded Folder::node(const pt::ConstTok& t) {
  if (t.text == "True" || t.text == "False") return make(pos(t), 1, ast::BoolLit{t.text == "True"});
  if (t.text == "None") return make(pos(t), 1, ast::NoneLit{});
  return unsupported(pos(t), "ellipsis literals");
}

Folder::Folded Folder::node(const pt::SkippedTok& t) { return unsupported(pos(t), t.what.c_str()); }

Folder::Folded Folder::node(const pt::Chain& c) {
  if (c.rest.empty()) return fold(c.first);
  const std::string& first_op = c.rest.front().op.text;
  const SourcePos at = pos(c.rest.front().op);
  Folded first = fold(c.first);
  if (first_op == "and" || first_op == "or") {
    ast::BoolChain chain{first_op == "and" ? ast::BoolOp::And : ast::BoolOp::Or, {first.expr}};
    int depth = first.depth;
    for (const auto& link : c.rest) {
      Folded v = fold(link.operand);
      depth = std::max(depth, v.depth);
      chain.values.push_back(v.expr);
    }
    return make(at, depth + 1, std::move(chain));
  }
  if (cmpop(first_op)) {
    ast::Compare cmp{first.expr, {}};
    int depth = first.depth;
    for (const auto& link : c.rest) {
      Folded v = fold(link.operand);
      depth = std::max(depth, v.depth);
      cmp.rest.emplace_back(*cmpop(link.op.text), v.expr);
    }
    return make(at, depth + 1, std::move(cmp));
  }
  // Left-associative fold; '**' chains have one link (the grammar nests them to the right).
  Folded acc = first;
  for (const auto& link : c.rest) {
    Folded rhs = fold(link.operand);
    acc = make(pos(link.op), std::max(acc.depth, rhs.depth) + 1,
               ast::Binary{*binop(link.op.text), acc.expr, rhs.expr});
  }
  return acc;
}

Folder::Folded Folder::node(const pt::UnaryX& u) {
  Folded operand = fold(u.operand);
  return make(pos(u.op), operand.depth + 1, ast::Unary{unop(u.op.text), operand.expr});
}

Folder::Folded Folder::node(const pt::PrimaryX& p) {
  Folded acc = fold(p.atom);
  const std::size_t begin = tagged(p.atom).begin;
  for (const auto& trailer : p.trailers) {
    acc = boost::apply_visitor(
        [&](const auto& t) -> Folded {
          using T = std::decay_t<decltype(t)>;
          if constexpr (std::is_same_v<T, pt::CallTrailer>) {
            ast::Call call{acc.expr, {}, {}};
            int depth = acc.depth;
            bool seen_keyword = false;
            for (const auto& arg : t.args) {
              Folded v = fold(arg.value);
              depth = std::max(depth, v.depth);
              if (arg.keyword) {
                for (const auto& k : call.keywords)
                  if (k.name == arg.keyword->id)
                    user_error(file_, pos(*arg.keyword), "keyword argument repeated: " + k.name);
                call.keywords.push_back({arg.keyword->id, pos(*arg.keyword), v.expr});
                seen_keyword = true;
                continue;
              }
              const auto* u = std::get_if<ast::UnsupportedExpr>(&v.expr->node);
              if (seen_keyword && !(u && u->what == "starred expressions"))
                user_error(file_, pos(tagged(arg.value)),
                           "positional argument follows keyword argument");
              call.args.push_back(v.expr);
            }
            if (t.comprehension) {  // f(x for x in y): the last argument is a generator
              std::size_t from = t.comprehension->begin;
              if (!call.args.empty()) {
                call.args.pop_back();
                from = tagged(t.args.back().value).begin;
              }
              call.args.push_back(
                  unsupported(pos(from, t.comprehension->end), "generator expressions").expr);
            }
            return make(pos(begin, t.end), depth + 1, std::move(call));
          } else if constexpr (std::is_same_v<T, pt::IndexTrailer>) {
            ast::Subscript sub{acc.expr, {}};
            int depth = acc.depth;
            for (const auto& item : t.items) {
              if (item.slice) {
                sub.indices.push_back(unsupported(pos(item), "slices").expr);
              } else if (!item.value) {
                user_error(file_, pos(item), "expected an expression");
              } else {
                Folded v = fold(*item.value);
                depth = std::max(depth, v.depth);
                sub.indices.push_back(v.expr);
              }
            }
            return make(pos(begin, t.end), depth + 1, std::move(sub));
          } else {
            return make(pos(begin, t.end), acc.depth + 1,
                        ast::Attribute{acc.expr, t.name.id, pos(t.name)});
          }
        },
        trailer.get());
  }
  return acc;
}

Folder::Folded Folder::node(const pt::ParenX& p) {
  if (p.comprehension) return unsupported(pos(p), "generator expressions");
  if (p.items.empty() && p.trailing_comma) {
    const char* text = file_.text().data();
    const char* at = scan::skip_blanks(text + p.open.end, text + p.end);
    user_error(file_, file_.pos_at(static_cast<std::size_t>(at - text)), "expected an expression");
  }
  if (p.items.size() != 1 || p.trailing_comma) return tuple(pos(p), p.items);
  return fold(p.items.front());
}

Folder::Folded Folder::node(const pt::TernaryX& t) {
  if (!t.tail) return fold(t.body);
  Folded then_value = fold(t.body), cond = fold(t.tail->cond), else_value = fold(t.tail->orelse);
  const int depth = std::max({then_value.depth, cond.depth, else_value.depth}) + 1;
  return make(pos(t.tail->if_kw), depth,
              ast::Ternary{then_value.expr, cond.expr, else_value.expr});
}

Folder::Folded Folder::node(const pt::LambdaX& l) {
  std::vector<pt::ParamX> ps;
  for (const auto& p : l.params) {
    pt::ParamX q;
    static_cast<pt::Tagged&>(q) = p;
    q.name = p.name;
    q.default_value = p.default_value;
    ps.push_back(std::move(q));
  }
  Folded body = fold(l.body);
  return make(pos(l.kw), body.depth + 1, ast::Lambda{params(ps), body.expr});
}

Folder::Folded Folder::node(const pt::StarredX& s) { return unsupported(pos(s), "starred expressions"); }

Folder::Folded Folder::node(const pt::WalrusX& w) {
  return unsupported(pos(w), "assignment expressions");
}

Folder::Folded Folder::list(const pt::ExprList& l) {
  if (is_tuple(l)) return tuple(pos(l), l.items);
  return fold(l.items.front());
}

Folder::Folded Folder::tuple(SourcePos at, const std::vector<pt::Expr>& items) {
  ast::Tuple t;
  int depth = 0;
  for (const auto& item : items) {
    Folded v = fold(item);
    depth = std::max(depth, v.depth);
    t.items.push_back(v.expr);
  }
  return make(at, depth + 1, std::move(t));
}

std::vector<ast::Param> Folder::params(const std::vector<pt::ParamX>& ps) {
  std::vector<ast::Param> out;
  bool seen_default = false;
  for (const auto& p : ps) {
    for (const auto& q : out)
      if (q.name == p.name.id)
        user_error(file_, pos(p.name),
                   "duplicate argument '" + p.name.id + "' in function definition");
    if (seen_default && !p.default_value)
      user_error(file_, pos(p.name), "parameter without a default follows parameter with a default");
    seen_default |= static_cast<bool>(p.default_value);
    out.push_back({p.name.id, pos(p.name), p.annotation ? expr(*p.annotation) : nullptr,
                   p.default_value ? expr(*p.default_value) : nullptr});
  }
  return out;
}

ast::FunctionDef Folder::def_header(const pt::DefX& d) {
  ast::FunctionDef f;
  f.name = d.name.id;
  f.name_pos = pos(d.name);
  f.params = params(d.params);
  f.returns = d.returns ? expr(*d.returns) : nullptr;
  return f;
}

ast::StmtPtr Folder::stmt(SourcePos pos, decltype(ast::Stmt::node) node) {
  return std::make_shared<const ast::Stmt>(ast::Stmt{pos, std::move(node)});
}

void Folder::simple(const pt::SimpleX& s, ast::Block& out) {
  boost::apply_visitor(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, pt::OpTok>) {
          if (n.text == "pass") out.push_back(stmt(pos(n), ast::Pass{}));
          else out.push_back(stmt(pos(n), ast::UnsupportedStmt{n.text}));
        } else if constexpr (std::is_same_v<T, pt::ReturnX>) {
          out.push_back(stmt(pos(n.kw), ast::Return{n.value ? list(*n.value).expr : nullptr}));
        } else if constexpr (std::is_same_v<T, pt::ImportX>) {
          for (const auto& name : n.names) {
            std::string module;
            for (const auto& part : name.parts) module += (module.empty() ? "" : ".") + part.id;
            out.push_back(stmt(pos(n.kw),
                               ast::Import{module, name.alias ? name.alias->id : std::string(),
                                           pos(name.parts.front().begin, name.parts.back().end)}));
          }
        } else if constexpr (std::is_same_v<T, pt::FromX>) {
          std::string module = n.dots.text;
          for (std::size_t i = 0; i < n.parts.size(); ++i)
            module += (i ? "." : "") + n.parts[i].id;
          if (module.empty()) user_error(file_, pos(n.dots), "expected a module name");
          const std::size_t end = n.parts.empty() ? n.dots.end : n.parts.back().end;
          ast::ImportFrom from{module, pos(n.dots.begin, end), {}};
          for (const auto& name : n.names)
            from.names.push_back({name.parts.front().id, name.alias ? name.alias->id : std::string(),
                                  pos(name.parts.front())});
          out.push_back(stmt(pos(n.kw), std::move(from)));
        } else if constexpr (std::is_same_v<T, pt::AssertX>) {
          out.push_back(stmt(pos(n.kw), ast::Assert{expr(n.cond), n.message ? expr(*n.message) : nullptr}));
        } else if constexpr (std::is_same_v<T, pt::DecoratorX>) {
          out.push_back(stmt(pos(n.at), ast::Decorator{expr(n.value)}));
        } else {
          expr_stmt(n, out);
        }
      },
      s.get());
}

// `a, b = ...` and `(a, b) = ...`: the names, when every target is a plain name.
std::optional<std::vector<std::pair<std::string, SourcePos>>> Folder::name_targets(const pt::ExprList& l) {
  std::vector<ast::ExprPtr> items;
  if (is_tuple(l)) {
    for (const auto& item : l.items) items.push_back(expr(item));
  } else {
    ast::ExprPtr e = expr(l.items.front());
    const auto* t = std::get_if<ast::Tuple>(&e->node);
    if (!t) return std::nullopt;
    items = t->items;
  }
  std::vector<std::pair<std::string, SourcePos>> names;
  for (const auto& item : items) {
    const auto* n = std::get_if<ast::Name>(&item->node);
    if (!n) return std::nullopt;
    names.emplace_back(n->id, item->pos);
  }
  return names;
}

void Folder::expr_stmt(const pt::ExprStmtX& s, ast::Block& out) {
  // A target's description for UnsupportedStmt, "" for a plain name; errors for non-targets.
  auto check_target = [&](const pt::Expr& e, bool in_tuple) -> std::string {
    Folded t = fold(e);
    const auto& n = t.expr->node;
    if (std::holds_alternative<ast::Name>(n)) return "";
    if (std::holds_alternative<ast::Attribute>(n)) return "assignment to an attribute";
    if (std::holds_alternative<ast::Subscript>(n)) return "assignment to a subscript";
    if (std::holds_alternative<ast::Tuple>(n)) return "assignment to a tuple";
    if (const auto* u = std::get_if<ast::UnsupportedExpr>(&n)) {
      if (u->what == "list literals") return "assignment to a list";
      if (u->what == "starred expressions") {
        if (!in_tuple)
          user_error(file_, t.expr->pos, "starred assignment target must be in a list or tuple");
        return "assignment to a starred target";
      }
    }
    user_error(file_, t.expr->pos, std::string("cannot assign to ") + describe(*t.expr));
  };
  // In a tuple target, the first item that is not a name is what is unsupported: the message
  // names it (tuple unpacking itself is supported) and points at it.
  SourcePos unsupported_at = pos(s.first);
  auto in_tuple = [](const std::string& what) -> std::string {
    if (what == "assignment to a tuple") return "nested tuple unpacking";
    return "unpacking into " + what.substr(std::string("assignment to ").size());
  };
  auto target_of = [&](const pt::ExprList& l) -> std::string {
    if (!is_tuple(l)) return check_target(l.items.front(), false);
    std::string first_unsupported;
    for (const auto& item : l.items) {
      const std::string what = check_target(item, true);
      if (what.empty() || !first_unsupported.empty()) continue;
      first_unsupported = in_tuple(what);
      if (&l == &s.first) unsupported_at = fold(item).expr->pos;
    }
    return first_unsupported.empty() ? "assignment to a tuple" : first_unsupported;
  };

  if (s.ann) {
    if (s.aug) user_error(file_, pos(s.aug->op), "invalid syntax");
    if (!s.assigns.empty()) user_error(file_, pos(s.assigns.front().eq), "invalid syntax");
    if (is_tuple(s.first))
      user_error(file_, pos(s.first), "only single target (not tuple) can be annotated");
    Folded target = fold(s.first.items.front());
    ast::ExprPtr annotation = expr(s.ann->annotation);
    ast::ExprPtr value = s.ann->value ? list(*s.ann->value).expr : nullptr;
    if (const auto* name = std::get_if<ast::Name>(&target.expr->node)) {
      out.push_back(stmt(target.expr->pos,
                         ast::AnnAssign{name->id, target.expr->pos, annotation, value}));
    } else if (std::holds_alternative<ast::Attribute>(target.expr->node)) {
      out.push_back(stmt(pos(s.first), ast::UnsupportedStmt{"annotated assignment to an attribute"}));
    } else if (std::holds_alternative<ast::Subscript>(target.expr->node)) {
      out.push_back(stmt(pos(s.first), ast::UnsupportedStmt{"annotated assignment to a subscript"}));
    } else {
      user_error(file_, target.expr->pos, "illegal target for annotation");
    }
    return;
  }
  if (s.aug) {
    if (!s.assigns.empty()) user_error(file_, pos(s.assigns.front().eq), "invalid syntax");
    if (is_tuple(s.first))
      user_error(file_, pos(s.first), "'tuple' is an illegal expression for augmented assignment");
    Folded target = fold(s.first.items.front());
    const std::string& op = s.aug->op.text;
    ast::ExprPtr value = list(s.aug->value).expr;
    if (const auto* name = std::get_if<ast::Name>(&target.expr->node)) {
      out.push_back(stmt(target.expr->pos,
                         ast::AugAssign{name->id, target.expr->pos,
                                        *binop(std::string_view(op).substr(0, op.size() - 1)),
                                        value}));
    } else if (std::holds_alternative<ast::Attribute>(target.expr->node)) {
      out.push_back(stmt(pos(s.first), ast::UnsupportedStmt{"augmented assignment to an attribute"}));
    } else if (std::holds_alternative<ast::Subscript>(target.expr->node)) {
      out.push_back(stmt(pos(s.first), ast::UnsupportedStmt{"augmented assignment to a subscript"}));
    } else {
      user_error(file_, target.expr->pos,
                 std::string("'") + describe(*target.expr) +
                     "' is an illegal expression for augmented assignment");
    }
    return;
  }
  if (!s.assigns.empty()) {
    std::string what = target_of(s.first);
    for (std::size_t i = 0; i + 1 < s.assigns.size(); ++i) target_of(s.assigns[i].value);
    ast::ExprPtr value = list(s.assigns.back().value).expr;
    if (s.assigns.size() > 1) {
      out.push_back(stmt(pos(s.first), ast::UnsupportedStmt{"chained assignment"}));
    } else if (what.empty()) {
      Folded target = fold(s.first.items.front());
      const auto& id = std::get<ast::Name>(target.expr->node).id;
      out.push_back(stmt(target.expr->pos, ast::Assign{id, target.expr->pos, value}));
    } else if (auto names = name_targets(s.first)) {
      SourcePos at = names->front().second;  // from the first name to the end of the last
      const SourcePos& last = names->back().second;
      if (last.line == at.line) at.length = last.col + last.length - at.col;
      out.push_back(stmt(at, ast::TupleAssign{std::move(*names), value}));
    } else if (what == "assignment to an attribute") {
      Folded target = fold(s.first.items.front());
      const auto& a = std::get<ast::Attribute>(target.expr->node);
      out.push_back(stmt(target.expr->pos, ast::AttributeAssign{a.value, a.attr, a.attr_pos, value}));
    } else {
      out.push_back(stmt(unsupported_at, ast::UnsupportedStmt{what}));
    }
    return;
  }
  Folded value = list(s.first);
  out.push_back(stmt(pos(s.first), ast::ExprStmt{value.expr}));
}

}  // namespace flexjit::dsl

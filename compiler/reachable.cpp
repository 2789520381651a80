#include "compiler/reachable.hpp"

#include "compiler/builtins.hpp"
#include "compiler/modules.hpp"

#include <set>
#include <type_traits>

namespace flexjit::compiler {
namespace ast = dsl::ast;

namespace {

using Names = std::set<std::string>;

// The free names of code, with those read only by annotations apart (they make statements
// needed, but a name that only annotates is no sign of a missing definition).
struct Reads {
  Names values;
  Names annotations;  // of parameters and results
  Names declared;     // of declarations and annotated constants: types of the language itself
};

void block_free_names(const ast::Block& body, const Names& bound, Reads& out);

// Names an expression reads that `bound` does not bind.
void expr_names(const ast::Expr& e, const Names& bound, Names& out) {
  auto sub = [&](const ast::ExprPtr& x) {
    if (x) expr_names(*x, bound, out);
  };
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::Name>) {
          if (!bound.count(n.id)) out.insert(n.id);
        } else if constexpr (std::is_same_v<T, ast::Attribute>) {
          sub(n.value);
        } else if constexpr (std::is_same_v<T, ast::Unary>) {
          sub(n.operand);
        } else if constexpr (std::is_same_v<T, ast::Binary>) {
          sub(n.lhs);
          sub(n.rhs);
        } else if constexpr (std::is_same_v<T, ast::BoolChain>) {
          for (const auto& v : n.values) sub(v);
        } else if constexpr (std::is_same_v<T, ast::Compare>) {
          sub(n.first);
          for (const auto& [op, v] : n.rest) sub(v);
        } else if constexpr (std::is_same_v<T, ast::Ternary>) {
          sub(n.then_value);
          sub(n.cond);
          sub(n.else_value);
        } else if constexpr (std::is_same_v<T, ast::Lambda>) {
          Names inner = bound;
          for (const auto& p : n.params) {
            sub(p.default_value);
            inner.insert(p.name);
          }
          if (n.body) expr_names(*n.body, inner, out);
        } else if constexpr (std::is_same_v<T, ast::Call>) {
          sub(n.callee);
          for (const auto& a : n.args) sub(a);
          for (const auto& k : n.keywords) sub(k.value);
        } else if constexpr (std::is_same_v<T, ast::Subscript>) {
          sub(n.value);
          for (const auto& i : n.indices) sub(i);
        } else if constexpr (std::is_same_v<T, ast::Tuple>) {
          for (const auto& i : n.items) sub(i);
        }
      },
      e.node);
}

// Names a statement binds in its scope (as Python decides locals: any assignment target, def or
// import, also inside an `if`).
void stmt_locals(const ast::Stmt& s, Names& out);

void block_locals(const ast::Block& body, Names& out) {
  for (const auto& s : body) stmt_locals(*s, out);
}

void stmt_locals(const ast::Stmt& s, Names& out) {
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::FunctionDef>) {
          out.insert(n.name);
        } else if constexpr (std::is_same_v<T, ast::Assign> || std::is_same_v<T, ast::AnnAssign> ||
                             std::is_same_v<T, ast::AugAssign>) {
          out.insert(n.target);
        } else if constexpr (std::is_same_v<T, ast::TupleAssign>) {
          for (const auto& [name, pos] : n.targets) out.insert(name);
        } else if constexpr (std::is_same_v<T, ast::If>) {
          block_locals(n.body, out);
          block_locals(n.orelse, out);
        } else if constexpr (std::is_same_v<T, ast::Import>) {
          out.insert(n.alias.empty() ? n.module.substr(0, n.module.find('.')) : n.alias);
        } else if constexpr (std::is_same_v<T, ast::ImportFrom>) {
          for (const auto& i : n.names) out.insert(i.alias.empty() ? i.name : i.alias);
        } else if constexpr (std::is_same_v<T, ast::UnsupportedStmt>) {
          if (!n.defines.empty()) out.insert(n.defines);
        }
      },
      s.node);
}

// The free names of a def: its annotations and defaults (read where it is defined), and its body
// with the parameters and its locals bound.
void function_free_names(const ast::FunctionDef& f, const Names& bound, Reads& out) {
  Names inner = bound;
  for (const auto& p : f.params) {
    if (p.annotation) expr_names(*p.annotation, bound, out.annotations);
    if (p.default_value) expr_names(*p.default_value, bound, out.values);
    inner.insert(p.name);
  }
  if (f.returns) expr_names(*f.returns, bound, out.annotations);
  block_locals(f.body, inner);
  block_free_names(f.body, inner, out);
}

void stmt_free_names(const ast::Stmt& s, const Names& bound, Reads& out) {
  auto sub = [&](const ast::ExprPtr& x) {
    if (x) expr_names(*x, bound, out.values);
  };
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::FunctionDef>) {
          function_free_names(n, bound, out);
        } else if constexpr (std::is_same_v<T, ast::Assign> || std::is_same_v<T, ast::TupleAssign> ||
                             std::is_same_v<T, ast::Return> || std::is_same_v<T, ast::ExprStmt> ||
                             std::is_same_v<T, ast::Decorator>) {
          sub(n.value);
        } else if constexpr (std::is_same_v<T, ast::AnnAssign>) {
          if (n.annotation) expr_names(*n.annotation, bound, out.declared);
          sub(n.value);
        } else if constexpr (std::is_same_v<T, ast::AugAssign>) {
          if (!bound.count(n.target)) out.values.insert(n.target);
          sub(n.value);
        } else if constexpr (std::is_same_v<T, ast::If>) {
          sub(n.cond);
          block_free_names(n.body, bound, out);
          block_free_names(n.orelse, bound, out);
        } else if constexpr (std::is_same_v<T, ast::AttributeAssign>) {
          sub(n.object);
          sub(n.value);
        } else if constexpr (std::is_same_v<T, ast::Assert>) {
          sub(n.cond);
          sub(n.message);
        }
      },
      s.node);
}

void block_free_names(const ast::Block& body, const Names& bound, Reads& out) {
  for (const auto& s : body) stmt_free_names(*s, bound, out);
}

// What one top-level statement defines and reads, and how it is kept.
struct TopStatement {
  Names defines;
  Reads reads;
  bool declaration = false;  // `x: int`, `t: Tensor[...]`: always kept
  bool always = false;       // `return` outside a function: Python refuses the whole file
  bool star_import = false;
  bool unsupported = false;  // while, for, class, ...: what it defines is unknown
  bool assert_stmt = false;
  int decorates = -1;  // a decorator: the index of the def it belongs to
};

TopStatement analyse(const ast::Stmt& s) {
  TopStatement t;
  stmt_free_names(s, {}, t.reads);
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::AnnAssign>) {
          t.declaration = !n.value;
          t.defines.insert(n.target);
        } else if constexpr (std::is_same_v<T, ast::ImportFrom>) {
          t.star_import = n.names.empty();
          stmt_locals(s, t.defines);
        } else if constexpr (std::is_same_v<T, ast::AttributeAssign>) {
          if (const auto* base = std::get_if<ast::Name>(&n.object->node)) t.defines.insert(base->id);
        } else if constexpr (std::is_same_v<T, ast::Assert>) {
          t.assert_stmt = true;
        } else if constexpr (std::is_same_v<T, ast::Return>) {
          t.always = true;
        } else if constexpr (std::is_same_v<T, ast::UnsupportedStmt>) {
          t.unsupported = n.defines.empty();  // a def flexjit cannot take is kept like any def
          stmt_locals(s, t.defines);
        } else {
          stmt_locals(s, t.defines);
        }
      },
      s.node);
  return t;
}

// Names every program sees without defining them (torch.Tensor and its kin annotate unimported).
bool is_builtin_name(const std::string& name) {
  return name == "torch" || name == "math" || find_builtin(Namespace::Bare, name) ||
         find_constant(Namespace::Bare, name) || find_named_only(Namespace::Torch, name) == NameKind::TensorType;
}

bool intersects(const Names& a, const Names& b) {
  for (const auto& x : a)
    if (b.count(x)) return true;
  return false;
}

}  // namespace

TopLevelReach reach_top_level(const ast::Module& module) {
  const std::size_t n = module.body.size();
  std::vector<TopStatement> top;
  top.reserve(n);
  for (const auto& s : module.body) top.push_back(analyse(*s));
  // A decorator belongs to the next def (a run of decorators to the same one).
  for (std::size_t i = n; i-- > 0;)
    if (std::holds_alternative<ast::Decorator>(module.body[i]->node))
      top[i].decorates = i + 1 < n && top[i + 1].decorates >= 0                                      ? top[i + 1].decorates
                         : i + 1 < n && std::holds_alternative<ast::FunctionDef>(module.body[i + 1]->node) ? int(i + 1)
                                                                                                       : -1;

  TopLevelReach r{std::vector<bool>(n, false)};
  const Names entry_points = {"mask_mod", "score_mod", "sink"};
  Names needed = entry_points;
  Names needed_values;           // read by kept statements other than as declared types
  Names defined_plainly;         // by statements other than star imports
  for (const auto& t : top)
    if (!t.star_import) defined_plainly.insert(t.defines.begin(), t.defines.end());
  auto keep = [&](std::size_t i) {
    r.kept[i] = true;
    if (top[i].declaration) needed.insert(top[i].defines.begin(), top[i].defines.end());  // so a redefinition is met
    needed.insert(top[i].reads.values.begin(), top[i].reads.values.end());
    needed.insert(top[i].reads.annotations.begin(), top[i].reads.annotations.end());
    needed.insert(top[i].reads.declared.begin(), top[i].reads.declared.end());
    needed_values.insert(top[i].reads.values.begin(), top[i].reads.values.end());
    needed_values.insert(top[i].reads.annotations.begin(), top[i].reads.annotations.end());
  };
  // A needed name nothing defines and no builtin provides may come from a star import or from a
  // statement flexjit does not run (a class, a loop): those are then kept, to be refused there.
  // (With no entry point defined, the program's whole purpose is unresolved.)
  auto unresolved = [&] {
    if (!intersects(entry_points, defined_plainly)) return true;
    for (const auto& name : needed_values)
      if (!defined_plainly.count(name) && !is_builtin_name(name)) return true;
    return false;
  };
  for (std::size_t i = 0; i < n; ++i)
    if (top[i].declaration || top[i].always) keep(i);
  for (bool grew = true; grew;) {
    grew = false;
    const bool missing = unresolved();  // once a round: the next round sees what this one added
    for (std::size_t i = 0; i < n; ++i) {
      if (r.kept[i] || top[i].assert_stmt || top[i].decorates >= 0) continue;
      const bool wanted = top[i].star_import || top[i].unsupported ? missing : intersects(top[i].defines, needed);
      if (wanted) {
        keep(i);
        grew = true;
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      if (!r.kept[i] && top[i].decorates >= 0 && r.kept[static_cast<std::size_t>(top[i].decorates)]) {
        keep(i);
        grew = true;
      }
  }
  // An assert is kept when it reads needed names and nothing a skipped statement defines.
  Names skipped_defines;
  for (std::size_t i = 0; i < n; ++i)
    if (!r.kept[i]) skipped_defines.insert(top[i].defines.begin(), top[i].defines.end());
  for (std::size_t i = 0; i < n; ++i)
    if (top[i].assert_stmt)
      r.kept[i] = intersects(top[i].reads.values, needed) && !intersects(top[i].reads.values, skipped_defines);
  return r;
}

std::string describe_statement(const ast::Stmt& s) {
  return std::visit(
      [](const auto& n) -> std::string {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::FunctionDef>) return "def " + n.name;
        if constexpr (std::is_same_v<T, ast::Assign> || std::is_same_v<T, ast::AnnAssign> ||
                      std::is_same_v<T, ast::AugAssign>)
          return n.target + " = ...";
        if constexpr (std::is_same_v<T, ast::TupleAssign>) return "unpacking assignment";
        if constexpr (std::is_same_v<T, ast::Import>) return "import " + n.module;
        if constexpr (std::is_same_v<T, ast::ImportFrom>) return "from " + n.module + " import ...";
        if constexpr (std::is_same_v<T, ast::AttributeAssign>) return "attribute assignment";
        if constexpr (std::is_same_v<T, ast::Assert>) return "assert";
        if constexpr (std::is_same_v<T, ast::Decorator>) return "decorator";
        if constexpr (std::is_same_v<T, ast::If>) return "if";
        if constexpr (std::is_same_v<T, ast::UnsupportedStmt>)
          return n.defines.empty() ? "'" + n.keyword + "' statement" : "def " + n.defines;
        if constexpr (std::is_same_v<T, ast::ExprStmt>) return "expression";
        return "statement";
      },
      s.node);
}

}  // namespace flexjit::compiler

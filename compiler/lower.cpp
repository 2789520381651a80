#include "compiler/lower.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "compiler/activations.hpp"
#include "compiler/builtins.hpp"
#include "compiler/lower_values.hpp"
#include "compiler/python_ops.hpp"
#include "compiler/reachable.hpp"
#include "ir/ir_visitor.hpp"
#include "ir/simplify.hpp"
#include "dsl/diagnostics.hpp"

namespace flexjit::compiler {

namespace ast = dsl::ast;
using dsl::SourcePos;
using ir::Type;

ScopePtr make_scope(Scope initial) {
  thread_local std::vector<Scope*> unreferenced;
  thread_local bool freeing = false;
  auto free_later = [](Scope* s) {
    unreferenced.push_back(s);
    if (freeing) return;  // an enclosing call's loop frees it
    freeing = true;
    while (!unreferenced.empty()) {
      Scope* next = unreferenced.back();
      unreferenced.pop_back();
      delete next;  // may drop the last reference to more scopes: they join the list
    }
    freeing = false;
  };
  return ScopePtr(new Scope(std::move(initial)), free_later);
}

std::string describe(const Value& v) {
  if (auto e = v.expr()) return fmt::format("a value of type {}", ir::type_name(e->type()));
  if (auto f = std::get_if<FunctionValue>(&v.v)) return f->body ? fmt::format("function '{}'", f->name) : "a lambda";
  if (auto b = std::get_if<BuiltinValue>(&v.v)) return fmt::format("builtin '{}'", b->spelling);
  if (auto m = std::get_if<ModuleValue>(&v.v)) return fmt::format("module '{}'", m->name);
  if (std::holds_alternative<std::shared_ptr<const MaskCombinator>>(v.v)) return "a combined mask";
  if (auto t = std::get_if<TensorValue>(&v.v)) return fmt::format("tensor '{}'", t->capture.name);
  if (auto b = std::get_if<BlockIndicesValue>(&v.v))
    return fmt::format("{} indices '{}'", b->tokens ? "token" : "block", b->name);
  if (auto n = std::get_if<NamedOnlyValue>(&v.v)) {
    switch (n->kind) {
      case NameKind::TensorType: return fmt::format("the type '{}'", n->spelling);
      case NameKind::TypingOnly: return fmt::format("'{}', a name for annotations", n->spelling);
      case NameKind::HostOnly: return fmt::format("'{}', a PyTorch host function", n->spelling);
    }
  }
  if (auto d = std::get_if<DTypeValue>(&v.v)) return fmt::format("the dtype '{}'", d->spelling);
  if (auto str = std::get_if<StringValue>(&v.v)) return fmt::format("the string '{}'", str->value);
  if (auto t = v.tuple()) return fmt::format("a tuple of {} item{}", t->items.size(), t->items.size() == 1 ? "" : "s");
  if (std::holds_alternative<std::shared_ptr<const PartialValue>>(v.v)) return "a functools.partial";
  return "None";
}

namespace {

constexpr int kMaxInlineDepth = 64;

thread_local std::uint64_t searched = 0;  // scopes_searched()

Value ir_value(ir::Expr e) { return Value{std::move(e)}; }

// Names a function body binds anywhere (not inside nested defs): Python makes them local.
void collect_locals(const ast::Block& block, std::set<std::string>& out) {
  for (const auto& s : block) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ast::Assign> || std::is_same_v<T, ast::AnnAssign> ||
                        std::is_same_v<T, ast::AugAssign>) {
            out.insert(n.target);
          } else if constexpr (std::is_same_v<T, ast::TupleAssign>) {
            for (const auto& target : n.targets) out.insert(target.first);
          } else if constexpr (std::is_same_v<T, ast::FunctionDef>) {
            out.insert(n.name);
          } else if constexpr (std::is_same_v<T, ast::If>) {
            collect_locals(n.body, out);
            collect_locals(n.orelse, out);
          }
        },
        s->node);
  }
}

bool is_docstring(const ast::Stmt& s) {
  auto e = std::get_if<ast::ExprStmt>(&s.node);
  return e && std::holds_alternative<ast::StringLit>(e->value->node);
}

// A static truth value, when an expression is known at compile time.
std::optional<bool> static_truth(const Value& v) {
  if (auto e = v.expr()) {
    ir::Expr c = ir::simplify(truthy(*e, {}));
    if (auto b = c.as<ir::BoolImm>()) return b->value;
    return std::nullopt;
  }
  if (auto str = std::get_if<StringValue>(&v.v)) return !str->value.empty();
  return !std::holds_alternative<NoneValue>(v.v);  // functions, modules, tensors are truthy
}

std::string unsupported_statement_message(const ast::UnsupportedStmt& u) {
  if (!u.message.empty()) return u.message;
  const std::string& keyword = u.keyword;
  static const std::set<std::string> loops = {"while", "for"};
  if (loops.count(keyword))
    return fmt::format("'{}' loops are not supported; a mod computes one value per (b, h, q_idx, kv_idx)", keyword);
  if (keyword == "class") return "class definitions are not supported";
  if (keyword.find(' ') != std::string::npos) return fmt::format("{} is not supported", keyword);
  return fmt::format("'{}' statements are not supported", keyword);
}

struct ModSignature {
  ir::ModKind kind;
  std::vector<std::pair<const char*, Type>> params;
  Type result;
};

const ModSignature kModSignatures[] = {
    {ir::ModKind::Mask,
     {{ir::kParamBatch, Type::Int}, {ir::kParamHead, Type::Int}, {ir::kParamQ, Type::Int}, {ir::kParamKv, Type::Int}},
     Type::Bool},
    {ir::ModKind::Score,
     {{ir::kParamScore, Type::Float},
      {ir::kParamBatch, Type::Int},
      {ir::kParamHead, Type::Int},
      {ir::kParamQ, Type::Int},
      {ir::kParamKv, Type::Int}},
     Type::Float},
    {ir::ModKind::Sink, {{ir::kParamBatch, Type::Int}, {ir::kParamHead, Type::Int}}, Type::Float},
};

std::string param_list(const ModSignature& sig) {
  std::string s;
  for (const auto& [name, type] : sig.params) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

class Lowerer {
 public:
  explicit Lowerer(const dsl::SourceFile& file) : file_(file), globals_(make_scope()) {}
  // Top-level functions close over the module scope that holds them: a reference cycle, broken
  // here (also when lowering stops at an error).
  ~Lowerer() { globals_->names.clear(); }
  Lowerer(const Lowerer&) = delete;
  Lowerer& operator=(const Lowerer&) = delete;

  ir::Program run(const ast::Module& module) {
    first_node_ = ir::nodes_made();
    program_.name = std::filesystem::path(file_.name()).stem().string();
    const TopLevelReach reach = reach_top_level(module);
    for (std::size_t i = 0; i < module.body.size(); ++i) {
      const ast::Stmt& s = *module.body[i];
      if (reach.kept[i]) {
        top_statement(s);
      } else {
        program_.skipped.push_back({s.pos, describe_statement(s)});
      }
    }
    for (const auto& sig : kModSignatures) lower_mod(sig);
    if (!program_.mask_mod && !program_.score_mod && !program_.sink)
      fail({1, 1, 1}, "the program defines none of mask_mod, score_mod or sink");
    return program_;
  }

 private:
  [[noreturn]] void fail(SourcePos pos, const std::string& message) const { dsl::user_error(file_, pos, message); }
  ErrorSink errors() const {
    return [this](SourcePos p, const std::string& m) { fail(p, m); };
  }

  // ---- top level ------------------------------------------------------------------------

  void top_statement(const ast::Stmt& s) {
    std::visit([&](const auto& n) { top(n, s.pos); }, s.node);
    check_size(s.pos, false);
  }

  // The size budget (kMaxLoweredNodes), checked after each statement and each inlined call: a
  // statement without calls makes nodes in proportion to its text, so lowering stops soon after
  // the limit is crossed.
  void check_size(SourcePos pos, bool after_call) const {
    const std::uint64_t size = ir::nodes_made() - first_node_ + calls_inlined_;
    if (size <= kMaxLoweredNodes) return;
    fail(pos, fmt::format("program too large ({} nodes, limit {}){}", size, kMaxLoweredNodes,
                          after_call ? ": every call is inlined, and inlining this one crosses the limit" : ""));
  }

  void define_global(const std::string& name, SourcePos pos, Value v) {
    if (auto it = declared_at_.find(name); it != declared_at_.end())
      fail(pos, fmt::format("'{}' is already declared as a {} on line {}", name, it->second.first, it->second.second));
    globals_->names.set(name, std::move(v));
  }

  void top(const ast::FunctionDef& f, SourcePos pos) {
    define_global(f.name, f.name_pos, Value{make_function(f, globals_)});
  }
  void top(const ast::Assign& a, SourcePos) { define_global(a.target, a.target_pos, eval(*a.value, globals_)); }
  void top(const ast::AnnAssign& a, SourcePos pos) {
    if (a.value) {  // `CAP: float = 50.0` is a constant of that type
      Value v = eval(*a.value, globals_);
      if (auto t = annotation_scalar_type(*a.annotation))
        v = ir_value(convert_annotated(v, *t, a.value->pos, a.target));
      define_global(a.target, a.target_pos, std::move(v));
      return;
    }
    declare(a);
  }
  void top(const ast::AugAssign& a, SourcePos) {
    Value cur = lookup(a.target, a.target_pos, globals_);
    Value rhs = eval(*a.value, globals_);
    const ir::Expr value = python_binary(a.op, require_ir(cur, a.target_pos, "operand"),
                                         require_ir(rhs, a.value->pos, "operand"), a.target_pos, errors());
    globals_->names.set(a.target, ir_value(value));
  }
  void top(const ast::Return&, SourcePos pos) { fail(pos, "'return' outside function"); }
  void top(const ast::If&, SourcePos pos) {
    fail(pos, "'if' at the top level is not supported; put the condition inside a function");
  }
  void top(const ast::Pass&, SourcePos) {}
  void top(const ast::ExprStmt& e, SourcePos pos) {
    if (std::holds_alternative<ast::StringLit>(e.value->node)) return;  // docstring
    fail(e.value->pos, "this expression has no effect; a program only declares, assigns and defines functions");
  }
  // `import torch.nn.functional as F` binds F; without `as`, Python binds the first component.
  void top(const ast::Import& im, SourcePos) {
    auto ns = find_module(im.module);
    if (!ns) fail(im.module_pos, unknown_module_message(im.module));
    if (!im.alias.empty()) {
      globals_->names.set(im.alias, Value{ModuleValue{*ns, im.alias}});
      return;
    }
    const std::string first = im.module.substr(0, im.module.find('.'));
    globals_->names.set(first, Value{ModuleValue{*find_module(first), first}});
  }
  // `from m import a as b` binds exactly what `m.a` means.
  void top(const ast::ImportFrom& im, SourcePos pos) {
    auto ns = find_module(im.module);
    if (!ns) fail(im.module_pos, unknown_module_message(im.module));
    if (im.names.empty()) {
      if (*ns == Namespace::Typing || *ns == Namespace::Future)
        fail(pos, fmt::format("'from {} import *' is not supported; import the names the program uses", im.module));
      for (const auto& name : star_names(*ns))
        globals_->names.set(name, member(ModuleValue{*ns, im.module}, name, pos, pos));
    }
    for (const auto& n : im.names)
      globals_->names.set(n.alias.empty() ? n.name : n.alias,
                          member(ModuleValue{*ns, im.module}, n.name, n.pos, n.pos));
  }
  static std::string unknown_module_message(const std::string& module) {
    return fmt::format("module '{}' has no meaning inside a kernel; a program may import only math, torch, "
                       "torch.nn.functional, torch.nn.attention.flex_attention, functools and typing",
                       module);
  }
  void top(const ast::TupleAssign& a, SourcePos pos) {
    std::vector<Value> values = unpack(a, eval(*a.value, globals_), pos);
    for (std::size_t i = 0; i < values.size(); ++i)
      define_global(a.targets[i].first, a.targets[i].second, std::move(values[i]));
  }
  void top(const ast::AttributeAssign& a, SourcePos) { assign_attribute(a, globals_); }
  void top(const ast::Assert& a, SourcePos pos) { check_assert(a, pos, globals_); }
  void top(const ast::Decorator& d, SourcePos) { check_decorator(d, globals_); }

  // ---- statements that compute nothing: unpacking, metadata, asserts, decorators -------------

  // a, b = value: Python's rules and messages.
  std::vector<Value> unpack(const ast::TupleAssign& a, const Value& v, SourcePos pos) const {
    const TupleValue* t = v.tuple();
    if (!t) fail(a.value->pos, fmt::format("cannot unpack {}: only a tuple can be unpacked", describe(v)));
    const std::size_t n = a.targets.size(), got = t->items.size();
    if (got > n) fail(pos, fmt::format("too many values to unpack (expected {}, got {})", n, got));
    if (got < n) fail(pos, fmt::format("not enough values to unpack (expected {}, got {})", n, got));
    return t->items;
  }

  // `fn.__name__ = f"..."` names a function for PyTorch's benefit; the kernel is unchanged.
  void assign_attribute(const ast::AttributeAssign& a, const ScopePtr& scope) {
    static const std::set<std::string> metadata = {"__name__", "__qualname__", "__doc__", "__module__"};
    Value object = eval(*a.object, scope);
    if (object.callable() && metadata.count(a.attr)) return;
    fail(a.attr_pos, fmt::format("assignment to attribute '{}' of {} is not supported; only a function's __name__, "
                                 "__qualname__, __doc__ and __module__ may be assigned (they are ignored)",
                                 a.attr, describe(object)));
  }

  // An assert on compile-time values is checked now; one on runtime scalars and shape values
  // when a call binds them (ir::RuntimeCheck). Anything that varies inside the kernel cannot be.
  void check_assert(const ast::Assert& a, SourcePos pos, const ScopePtr& scope) {
    const Value cond = eval(*a.cond, scope);
    auto known = static_truth(cond);
    if (!known) {
      const ir::Expr c = ir::simplify(truthy(require_ir(cond, a.cond->pos, "an assert's condition"), a.cond->pos));
      if (!only_bound_values(c))
        fail(a.cond->pos, "assert on a value that varies inside the kernel (it depends on b, h, q_idx, kv_idx, score or "
                          "a tensor's elements) is not supported; a kernel cannot raise");
      const std::string message = a.message ? message_text(*a.message) : condition_text(a, pos);
      for (const auto& c0 : program_.checks)
        if (c0.pos.line == pos.line && c0.pos.col == pos.col && ir::equal(c0.cond, c)) return;  // the same assert met again
      program_.checks.push_back({c, message, pos});
      return;
    }
    if (*known) return;
    if (!a.message) fail(pos, "assertion failed");
    fail(pos, fmt::format("assertion failed: {}", message_text(*a.message)));
  }

  std::string message_text(const ast::Expr& m) const {
    if (auto str = std::get_if<ast::StringLit>(&m.node)) return str->value;
    return source_text(m.pos);
  }

  std::string source_text(SourcePos p) const {
    return std::string(file_.line_text(p.line).substr(p.col - 1, p.length));
  }

  // The text of an assert's condition as written on its line: after `assert`, up to the comma
  // before the message or a comment.
  std::string condition_text(const ast::Assert& a, SourcePos pos) const {
    const std::string line(file_.line_text(pos.line));
    std::size_t begin = std::min(line.size(), static_cast<std::size_t>(pos.col - 1) + 6);  // after "assert"
    std::size_t end = line.size();
    if (a.message && a.message->pos.line == pos.line) end = std::min(end, static_cast<std::size_t>(a.message->pos.col - 1));
    if (auto hash = line.find('#', begin); hash != std::string::npos) end = std::min(end, hash);
    std::string text = line.substr(begin, end > begin ? end - begin : 0);
    const auto first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t,");
    if (first == std::string::npos || last == std::string::npos || a.cond->pos.line != pos.line)
      return source_text(a.cond->pos);
    return text.substr(first, last - first + 1);
  }

  // Whether e reads nothing but runtime scalars (declared or shape values) and constants.
  static bool only_bound_values(const ir::Expr& e) {
    struct Reads : ir::OnceVisitor {
      bool ok = true;
      void visit(const ir::Var* op, const ir::Expr&) override { ok = ok && op->var_kind == ir::VarKind::Scalar; }
      void visit(const ir::Load*, const ir::Expr&) override { ok = false; }
    } r;
    r.walk(e);
    return r.ok;
  }

  // Decorators that leave what a function computes unchanged are accepted; others are refused.
  void check_decorator(const ast::Decorator& d, const ScopePtr& scope) {
    const ast::Expr* target = d.value.get();
    if (auto c = std::get_if<ast::Call>(&target->node)) target = c->callee.get();
    std::optional<Value> v;
    try {
      v = eval(*target, scope);
    } catch (const dsl::CompileError&) {
    }
    auto b = v ? std::get_if<BuiltinValue>(&v->v) : nullptr;
    if (b && b->fn == Builtin::NoOpDecorator) return;
    fail(d.value->pos, fmt::format("decorator '{}' is not supported; only decorators that leave the function "
                                   "unchanged are accepted (functools.lru_cache, functools.cache, "
                                   "functools.wraps, torch.compile, torch.no_grad, torch.inference_mode)",
                                   callee_spelling(*target)));
  }
  void top(const ast::UnsupportedStmt& u, SourcePos pos) { fail(pos, unsupported_statement_message(u)); }

  // A program selects keys by at most one list, of blocks or of tokens.
  void require_no_selection(const ast::AnnAssign& a) const {
    const auto& b = program_.block_indices;
    const auto& t = program_.token_indices;
    if (!b && !t) return;
    fail(a.target_pos, fmt::format("a program declares at most one BlockIndices or TokenIndices; '{}' is already "
                                   "declared on line {}",
                                   b ? b->name : t->name, b ? b->pos.line : t->pos.line));
  }

  // `x: int`, `t: Tensor[int32, 1]`, `sel: BlockIndices[64, 64]`, `sel: TokenIndices`
  void declare(const ast::AnnAssign& a) {
    if (globals_->names.contains(a.target) || declared_at_.count(a.target))
      fail(a.target_pos, fmt::format("'{}' is already defined", a.target));
    const ast::Expr& ann = *a.annotation;
    if (auto t = annotation_scalar_type(ann)) {
      program_.scalars.push_back({a.target, *t, a.target_pos});
      globals_->names.set(a.target, ir_value(ir::Var::make(a.target, *t, ir::VarKind::Scalar, a.target_pos)));
      declared_at_[a.target] = {"runtime scalar", a.target_pos.line};
      return;
    }
    auto sub = std::get_if<ast::Subscript>(&ann.node);
    std::string head = sub ? annotation_head(*sub->value) : std::string();
    if (head == "Tensor") {
      if (sub->indices.size() != 2)
        fail(ann.pos, "Tensor[...] takes a dtype and a rank, e.g. Tensor[int32, 1]");
      std::string dname = annotation_head(*sub->indices[0]);
      auto dtype = ir::dtype_from_name(dname);
      if (!dtype) {
        std::string hint = dsl::closest_name(dname, {"bool", "int8", "int16", "int32", "int64", "uint8", "float16",
                                                     "bfloat16", "float32", "float64"});
        fail(sub->indices[0]->pos, fmt::format("unknown dtype '{}'{}", dname,
                                               hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
      }
      int rank = positive_int(*sub->indices[1], "the rank of a Tensor", 0, 8);
      ir::Capture cap{a.target, *dtype, rank, a.target_pos};
      program_.captures.push_back(cap);
      globals_->names.set(a.target, Value{TensorValue{cap, {}, rank == 0 ? element_of(cap, a.target_pos) : ir::Expr()}});
      declared_at_[a.target] = {"captured tensor", a.target_pos.line};
      return;
    }
    if (head == "BlockIndices") {
      require_no_selection(a);
      if (sub->indices.size() != 2)
        fail(ann.pos, "BlockIndices[...] takes the query and key block sizes, e.g. BlockIndices[64, 64]");
      int qb = positive_int(*sub->indices[0], "a block size", 16, 4096);
      int kb = positive_int(*sub->indices[1], "a block size", 16, 4096);
      for (auto [v, e] : {std::pair{qb, sub->indices[0]}, std::pair{kb, sub->indices[1]}})
        if (v % 16 != 0) fail(e->pos, fmt::format("block sizes must be multiples of 16, got {}", v));
      program_.block_indices = ir::BlockIndices{a.target, qb, kb, a.target_pos};
      globals_->names.set(a.target, Value{BlockIndicesValue{a.target}});
      declared_at_[a.target] = {"block index list", a.target_pos.line};
      return;
    }
    if (head == "TokenIndices" || annotation_head(ann) == "TokenIndices") {
      if (sub)
        fail(ann.pos, "TokenIndices takes no arguments: the list length K is the last dimension of the bound tensor");
      require_no_selection(a);
      program_.token_indices = ir::TokenIndices{a.target, a.target_pos};
      globals_->names.set(a.target, Value{BlockIndicesValue{a.target, true}});
      declared_at_[a.target] = {"token index list", a.target_pos.line};
      return;
    }
    fail(ann.pos,
         "unsupported declaration; expected int, float, bool, Tensor[dtype, rank], BlockIndices[q_block, kv_block] or "
         "TokenIndices");
  }

  static std::string annotation_head(const ast::Expr& e) {
    if (auto n = std::get_if<ast::Name>(&e.node)) return n->id;
    if (auto a = std::get_if<ast::Attribute>(&e.node)) return a->attr;  // torch.Tensor, torch.int32
    return "";
  }

  static std::optional<Type> annotation_scalar_type(const ast::Expr& e) {
    std::string h = annotation_head(e);
    if (h == "int") return Type::Int;
    if (h == "float") return Type::Float;
    if (h == "bool") return Type::Bool;
    return std::nullopt;
  }

  int positive_int(const ast::Expr& e, const char* what, int lo, int hi) const {
    auto lit = std::get_if<ast::IntLit>(&e.node);
    if (!lit) fail(e.pos, fmt::format("{} must be an integer literal", what));
    if (lit->value < lo || lit->value > hi)
      fail(e.pos, fmt::format("{} must be between {} and {}, got {}", what, lo, hi, lit->value));
    return static_cast<int>(lit->value);
  }

  // ---- mods -------------------------------------------------------------------------------

  void lower_mod(const ModSignature& sig) {
    const char* name = ir::mod_name(sig.kind);
    const Value* found = globals_->names.find(name);
    if (!found) return;
    const Value& fn = *found;
    SourcePos def_pos = position_of(fn);
    if (!fn.callable()) fail(def_pos, fmt::format("{} must be a function, got {}", name, describe(fn)));

    if (auto f = std::get_if<FunctionValue>(&fn.v)) {
      if (f->params->size() != sig.params.size())
        fail(f->pos, fmt::format("{} must take {} parameters ({}), got {}", name, sig.params.size(), param_list(sig),
                                 f->params->size()));
      for (std::size_t i = 0; i < sig.params.size(); ++i) {
        const auto& p = (*f->params)[i];
        if (p.annotation) check_param_annotation(p, *p.annotation, sig.params[i].second, name);
      }
    }

    std::vector<ir::Expr> params;
    std::vector<Value> args;
    for (const auto& [pname, ptype] : sig.params) {
      params.push_back(ir::Var::make(pname, ptype, ir::VarKind::Param, def_pos));
      args.push_back(ir_value(params.back()));
    }
    Value result = call(fn, std::move(args), {}, def_pos, name);
    const ir::Expr* body = result.expr();
    if (!body) fail(def_pos, fmt::format("{} must return {}, got {}", name, ir::type_name(sig.result), describe(result)));
    ir::Expr e = *body;
    if (sig.result == Type::Bool && e.type() != Type::Bool)
      fail(e->pos.known() ? e->pos : def_pos,
           fmt::format("{} must return bool, got {}", name, ir::type_name(e.type())));
    if (sig.result == Type::Float) e = cast_to(Type::Float, e, e->pos);

    ir::Mod mod{sig.kind, std::move(params), e, def_pos};
    switch (sig.kind) {
      case ir::ModKind::Mask: program_.mask_mod = std::move(mod); break;
      case ir::ModKind::Score: program_.score_mod = std::move(mod); break;
      case ir::ModKind::Sink: program_.sink = std::move(mod); break;
    }
  }

  // FlexAttention passes tensors, so a tensor type fits every parameter; int, float and bool must
  // be the parameter's own type; any other type contradicts it, and a name must exist.
  void check_param_annotation(const ast::Param& p, const ast::Expr& ann, Type type, const char* mod) {
    auto contradicts = [&](const std::string& written) {
      fail(ann.pos, fmt::format("parameter '{}' of {} is {} {}, but is annotated '{}'", p.name, mod,
                                type == Type::Int ? "an" : "a", ir::type_name(type), written));
    };
    if (auto t = annotation_scalar_type(ann)) {
      if (*t != type) contradicts(ir::type_name(*t));
      return;
    }
    static const std::set<std::string> other_types = {"str", "list", "dict", "tuple", "set", "bytes", "complex"};
    if (const auto* n = std::get_if<ast::Name>(&ann.node); n && other_types.count(n->id)) contradicts(n->id);
    if (std::holds_alternative<ast::StringLit>(ann.node)) return;  // a forward reference is not checked
    const ast::Expr& head = std::holds_alternative<ast::Subscript>(ann.node) ? *std::get<ast::Subscript>(ann.node).value : ann;
    // `Tensor`, like the `Tensor[dtype, rank]` of declarations, needs no import.
    if (const auto* n = std::get_if<ast::Name>(&head.node);
        n && !globals_->names.contains(n->id) && find_named_only(Namespace::Torch, n->id) == NameKind::TensorType)
      return;
    Value v = eval(head, globals_);
    auto named = std::get_if<NamedOnlyValue>(&v.v);
    if (named && named->kind != NameKind::HostOnly) return;
    fail(ann.pos, fmt::format("the annotation of parameter '{}' of {} is {}, not a type", p.name, mod, describe(v)));
  }

  SourcePos position_of(const Value& v) const {
    if (auto f = std::get_if<FunctionValue>(&v.v)) return f->pos;
    if (auto e = v.expr()) return (*e)->pos;
    return {1, 1, 1};
  }

  // ---- functions and calls -----------------------------------------------------------------

  FunctionValue make_function(const ast::FunctionDef& f, ScopePtr closure) const {
    return FunctionValue{f.name, &f.params, &f.body, nullptr, &f, f.name_pos, std::move(closure)};
  }

  Value call(const Value& callee, std::vector<Value> args, std::vector<std::pair<ast::Keyword, Value>> kwargs,
             SourcePos pos, const std::string& spelled) {
    if (auto f = std::get_if<FunctionValue>(&callee.v)) return call_function(*f, std::move(args), std::move(kwargs), pos);
    if (auto b = std::get_if<BuiltinValue>(&callee.v)) return call_builtin(*b, std::move(args), std::move(kwargs), pos);
    if (auto p = std::get_if<std::shared_ptr<const PartialValue>>(&callee.v)) {
      std::vector<Value> all((*p)->args.begin() + 1, (*p)->args.end());
      for (auto& a : args) all.push_back(std::move(a));
      std::vector<std::pair<ast::Keyword, Value>> all_kw;
      for (const auto& [kw, v] : (*p)->kwargs) {
        const std::string& kw_name = kw.name;
        auto later = std::find_if(kwargs.begin(), kwargs.end(), [&](const auto& k) { return k.first.name == kw_name; });
        if (later == kwargs.end()) all_kw.emplace_back(kw, v);  // a call's keyword overrides the partial's
      }
      for (auto& k : kwargs) all_kw.push_back(std::move(k));
      return call((*p)->args.front(), std::move(all), std::move(all_kw), pos, spelled);
    }
    if (auto m = std::get_if<std::shared_ptr<const MaskCombinator>>(&callee.v)) {
      no_keywords(kwargs, (*m)->is_and ? "and_masks(...)" : "or_masks(...)");
      if (args.size() != 4)
        fail(pos, fmt::format("a mask built by {}() takes 4 arguments (b, h, q_idx, kv_idx), {} given",
                              (*m)->is_and ? "and_masks" : "or_masks", args.size()));
      ir::Expr acc = ir::BoolImm::make((*m)->is_and, pos);
      for (const Value& mask : (*m)->masks) {
        Value r = call(mask, args, {}, pos, "mask");
        ir::Expr b = truthy(require_ir(r, pos, "a mask's result"), pos);
        acc = ir::Binary::make((*m)->is_and ? ir::BinaryOp::And : ir::BinaryOp::Or, acc, b, pos);
      }
      return ir_value(acc);
    }
    fail(pos, fmt::format("'{}' is not callable: it is {}", spelled, describe(callee)));
  }

  Value call_function(const FunctionValue& f, std::vector<Value> args,
                      std::vector<std::pair<ast::Keyword, Value>> kwargs, SourcePos pos) {
    // A call is recursive when the same function with the same captured scope is already being
    // inlined: two closures of one lambda with different captures (`twice(twice(inc))`) are
    // different functions, as in Python. Recursion that makes a new closure at every level is
    // caught by the depth limit.
    const Activation activation{f.identity, f.closure.get()};
    if (std::find(inlining_.begin(), inlining_.end(), activation) != inlining_.end())
      fail(pos, fmt::format("recursion is not supported: '{}' calls itself", f.name));
    if (inlining_.size() >= kMaxInlineDepth) too_deep(f, pos);

    const auto& params = *f.params;
    std::string fname = f.name + "()";
    if (args.size() > params.size())
      fail(pos, fmt::format("{} takes {} positional argument{} but {} {} given", fname, params.size(),
                            params.size() == 1 ? "" : "s", args.size(), args.size() == 1 ? "was" : "were"));
    ScopePtr frame = make_scope();
    frame->parent = f.closure;
    auto locals = std::make_shared<std::set<std::string>>();
    if (f.body) collect_locals(*f.body, *locals);
    frame->frame_locals = std::move(locals);
    std::vector<bool> bound(params.size(), false);
    for (std::size_t i = 0; i < args.size(); ++i) {
      frame->names.set(params[i].name, std::move(args[i]));
      bound[i] = true;
    }
    for (auto& [kw, v] : kwargs) {
      const std::string& kw_name = kw.name;  // clang 14 cannot capture structured bindings
      auto it = std::find_if(params.begin(), params.end(), [&](const ast::Param& p) { return p.name == kw_name; });
      if (it == params.end()) fail(kw.pos, fmt::format("{} got an unexpected keyword argument '{}'", fname, kw.name));
      std::size_t i = it - params.begin();
      if (bound[i]) fail(kw.pos, fmt::format("{} got multiple values for argument '{}'", fname, kw.name));
      frame->names.set(kw.name, std::move(v));
      bound[i] = true;
    }
    std::vector<std::string> missing;
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (bound[i]) continue;
      if (params[i].default_value) frame->names.set(params[i].name, eval(*params[i].default_value, f.closure));
      else missing.push_back("'" + params[i].name + "'");
    }
    if (!missing.empty()) {
      std::string list = missing[0];
      for (std::size_t i = 1; i < missing.size(); ++i) list += (i + 1 == missing.size() ? " and " : ", ") + missing[i];
      fail(pos, fmt::format("{} missing {} required positional argument{}: {}", fname, missing.size(),
                            missing.size() == 1 ? "" : "s", list));
    }

    inlining_.push_back(activation);
    function_names_.push_back(f.name);
    function_pos_.push_back(f.pos);
    Value result;
    if (f.lambda_body) {
      result = eval(*f.lambda_body, frame);
    } else {
      auto r = run_block(*f.body, 0, nullptr, frame);
      if (!r) fail(f.pos, fmt::format("function '{}' can reach its end without returning a value", f.name));
      result = std::move(*r);
    }
    inlining_.pop_back();
    function_names_.pop_back();
    function_pos_.pop_back();
    ++calls_inlined_;
    check_size(pos, true);
    return result;
  }

  // Calls nested past the limit: recursion when one function is on the stack twice (each time
  // with a new closure, or the check above would have caught it), else just deep.
  [[noreturn]] void too_deep(const FunctionValue& f, SourcePos pos) const {
    for (std::size_t i = 0; i < inlining_.size(); ++i) {
      const void* id = inlining_[i].identity;
      const bool again = id == f.identity || std::any_of(inlining_.begin() + i + 1, inlining_.end(),
                                                         [&](const Activation& a) { return a.identity == id; });
      if (again)
        fail(pos, fmt::format("recursion is not supported: '{}' calls itself, with a new closure at each level "
                              "(calls nest more than {} levels)",
                              function_names_[i], kMaxInlineDepth));
    }
    fail(pos, fmt::format("calls are nested too deeply (more than {} levels)", kMaxInlineDepth));
  }

  // The rest of an enclosing block to run after a nested block ends (continuation).
  struct Rest {
    const ast::Block* block;
    std::size_t index;
    const Rest* next;
  };

  // Binds a name in the scope that follows `scope`. A scope that something else holds (a closure
  // captured it, a branch still runs from it) is copied first, which shares its names: a chain
  // link per binding instead made every name lookup walk one link per closure made before it
  // (quadratic in a run of `f = lambda: 0`).
  static void bind(ScopePtr& scope, const std::string& name, Value v) {
    if (scope.use_count() != 1) scope = make_scope(*scope);
    scope->names.set(name, std::move(v));
  }

  // Runs statements [i, end) of block, then the rest; returns the returned value, or nothing
  // when control reaches the end of the function.
  std::optional<Value> run_block(const ast::Block& block, std::size_t i, const Rest* rest, ScopePtr scope) {
    for (; i < block.size(); ++i) {
      const ast::Stmt& s = *block[i];
      if (auto r = std::get_if<ast::Return>(&s.node)) return r->value ? eval(*r->value, scope) : Value{NoneValue{}};
      if (auto a = std::get_if<ast::Assign>(&s.node)) {
        bind(scope, a->target, eval(*a->value, scope));
      } else if (auto a = std::get_if<ast::TupleAssign>(&s.node)) {
        std::vector<Value> values = unpack(*a, eval(*a->value, scope), s.pos);
        for (std::size_t k = 0; k < values.size(); ++k) bind(scope, a->targets[k].first, std::move(values[k]));
      } else if (auto a = std::get_if<ast::AttributeAssign>(&s.node)) {
        assign_attribute(*a, scope);
      } else if (auto a = std::get_if<ast::Assert>(&s.node)) {
        check_assert(*a, s.pos, scope);
      } else if (auto d = std::get_if<ast::Decorator>(&s.node)) {
        check_decorator(*d, scope);
      } else if (auto a = std::get_if<ast::AnnAssign>(&s.node)) {
        if (!a->value) continue;  // a bare local annotation declares nothing
        Value v = eval(*a->value, scope);
        if (auto t = annotation_scalar_type(*a->annotation)) v = ir_value(convert_annotated(v, *t, a->value->pos, a->target));
        bind(scope, a->target, std::move(v));
      } else if (auto a = std::get_if<ast::AugAssign>(&s.node)) {
        Value cur = lookup(a->target, a->target_pos, scope);
        Value rhs = eval(*a->value, scope);
        bind(scope, a->target,
             ir_value(python_binary(a->op, require_ir(cur, a->target_pos, "operand"),
                                    require_ir(rhs, a->value->pos, "operand"), a->target_pos, errors())));
      } else if (auto f = std::get_if<ast::FunctionDef>(&s.node)) {
        bind(scope, f->name, Value{make_function(*f, scope)});
      } else if (auto f = std::get_if<ast::If>(&s.node)) {
        Rest after{&block, i + 1, rest};
        Value cond = eval(*f->cond, scope);
        if (auto known = static_truth(cond)) return run_block(*known ? f->body : f->orelse, 0, &after, scope);
        auto then_v = run_block(f->body, 0, &after, scope);
        auto else_v = run_block(f->orelse, 0, &after, scope);
        if (!then_v || !else_v) return merge_fallthrough(then_v, else_v, s.pos);
        return select_values(*cond.expr(), *then_v, *else_v, f->cond->pos);
      } else if (std::holds_alternative<ast::Pass>(s.node) || is_docstring(s)) {
        // nothing to do
      } else if (auto e = std::get_if<ast::ExprStmt>(&s.node)) {
        eval(*e->value, scope);  // evaluated for its errors; a pure expression has no effect
      } else if (std::holds_alternative<ast::Import>(s.node) || std::holds_alternative<ast::ImportFrom>(s.node)) {
        fail(s.pos, "imports are only supported at the top level of a program");
      } else if (auto u = std::get_if<ast::UnsupportedStmt>(&s.node)) {
        fail(s.pos, unsupported_statement_message(*u));
      }
      check_size(s.pos, false);
    }
    if (rest) return run_block(*rest->block, rest->index, rest->next, scope);
    return std::nullopt;
  }

  std::optional<Value> merge_fallthrough(const std::optional<Value>& a, const std::optional<Value>& b, SourcePos) {
    if (!a && !b) return std::nullopt;
    fail(function_pos_.back(),
         fmt::format("function '{}' can reach its end without returning a value", function_names_.back()));
  }

  // ---- builtins ------------------------------------------------------------------------------

  void expect_args(const std::vector<Value>& args, std::size_t n, const std::string& name, SourcePos pos) const {
    if (args.size() == n) return;
    if (n == 1) fail(pos, fmt::format("{}() takes exactly one argument ({} given)", name, args.size()));
    fail(pos, fmt::format("{}() takes {} arguments ({} given)", name, n, args.size()));
  }

  void no_keywords(const std::vector<std::pair<ast::Keyword, Value>>& kwargs, const std::string& name) const {
    if (!kwargs.empty())
      fail(kwargs[0].first.pos, fmt::format("{}() got an unexpected keyword argument '{}'", name, kwargs[0].first.name));
  }

  ir::Expr require_ir(const Value& v, SourcePos pos, const std::string& what) const {
    if (auto e = v.expr()) return *e;
    if (auto t = std::get_if<TensorValue>(&v.v)) fail(pos, unread_tensor_message(*t));
    if (auto b = std::get_if<BlockIndicesValue>(&v.v))
      fail(pos, b->tokens ? fmt::format("token indices '{}' cannot be read in a mod; they select the keys each query "
                                        "row attends to",
                                        b->name)
                          : fmt::format("block indices '{}' cannot be read in a mod; they select the kv blocks the "
                                        "kernel visits",
                                        b->name));
    fail(pos, fmt::format("{} must be a number or a bool, got {}", what, describe(v)));
  }

  static std::string unread_tensor_message(const TensorValue& t) {
    const ir::Capture& cap = t.capture;
    if (!t.prefix.empty())
      return fmt::format("tensor '{}' has rank {} but is indexed with {} ind{}", cap.name, cap.rank, t.prefix.size(),
                         t.prefix.size() == 1 ? "ex" : "ices");
    std::string example = "i, j, k, l, m, n, o, p";
    return fmt::format("tensor '{}' must be indexed, e.g. {}[{}]", cap.name, cap.name, example.substr(0, 3 * cap.rank - 2));
  }

  // The one element of a rank-0 capture: always in range, since the tensor has exactly one.
  static ir::Expr element_of(const ir::Capture& cap, SourcePos pos) { return ir::Load::make(cap.name, cap.dtype, {}, pos); }

  // Methods PyTorch code calls on a captured tensor: moving or laying it out changes nothing
  // here, and its rank is known. A rank-0 tensor converted to a dtype (`offset.to(torch.float32)`)
  // is the number converted.
  std::optional<Value> tensor_method(const TensorValue& t, const std::string& name, const ast::Call& call, SourcePos pos,
                                     const ScopePtr& scope) {
    static const std::set<std::string> unchanged = {"contiguous", "cuda", "cpu", "to", "detach", "clone"};
    if (t.number && name == "to" && names_dtype(call, scope)) return std::nullopt;
    if (unchanged.count(name)) return Value{t};
    if (name == "dim") {
      if (!call.args.empty() || !call.keywords.empty()) fail(pos, "dim() takes no arguments");
      return ir_value(ir::IntImm::make(t.capture.rank - static_cast<std::int64_t>(t.prefix.size()), pos));
    }
    if (name == "size") {  // t.size() is t.shape, t.size(i) and t.size(dim=i) are t.shape[i]
      if (call.args.empty() && call.keywords.empty()) return shape_tuple(t, pos);
      if (call.args.size() + call.keywords.size() != 1) fail(pos, "size() takes at most one argument, the dimension");
      if (!call.keywords.empty() && call.keywords[0].name != "dim")
        fail(call.keywords[0].pos, fmt::format("size() got an unexpected keyword argument '{}'", call.keywords[0].name));
      const ast::Expr& dim = call.args.empty() ? *call.keywords[0].value : *call.args[0];
      return shape_value(t, constant_int(dim, scope, "the dimension of size()"), dim.pos);
    }
    return std::nullopt;
  }

  // Whether `x.to(arg)` converts to a dtype (rather than moving to a device, which names may spell
  // that mean nothing here: `q.device`).
  bool names_dtype(const ast::Call& call, const ScopePtr& scope) {
    if (call.args.size() != 1 || !call.keywords.empty()) return false;
    try {
      return std::holds_alternative<DTypeValue>(eval(*call.args[0], scope).v);
    } catch (const dsl::CompileError&) {
      return false;
    }
  }

  std::int64_t constant_int(const ast::Expr& e, const ScopePtr& scope, const std::string& what) {
    ir::Expr x = ir::simplify(require_ir(eval(e, scope), e.pos, what));
    auto k = x.as<ir::IntImm>();
    if (!k) fail(e.pos, fmt::format("{} must be an integer known at compile time", what));
    return k->value;
  }

  // The size of a captured tensor along one axis of what is left to index (negative axes count
  // from the end): known when the call binds the tensor, so a runtime scalar the call does not
  // name, read from the bound tensor (ir::Scalar::shape_of).
  Value shape_value(const TensorValue& t, std::int64_t axis, SourcePos pos) {
    const auto rank = static_cast<std::int64_t>(t.capture.rank) - static_cast<std::int64_t>(t.prefix.size());
    if (rank == 0) fail(pos, fmt::format("tensor '{}' has no dimensions left to measure", t.capture.name));
    if (axis < -rank || axis >= rank)
      fail(pos, fmt::format("dimension out of range (expected to be in range of [{}, {}], but got {})", -rank, rank - 1,
                            axis));
    const int full_axis = static_cast<int>((axis < 0 ? axis + rank : axis) + static_cast<std::int64_t>(t.prefix.size()));
    const std::string name = fmt::format("{}.shape[{}]", t.capture.name, full_axis);
    if (!program_.find_scalar(name)) {
      ir::Scalar s{name, Type::Int, pos};
      s.shape_of = t.capture.name;
      s.axis = full_axis;
      program_.scalars.push_back(std::move(s));
    }
    return ir_value(ir::Var::make(name, Type::Int, ir::VarKind::Scalar, pos));
  }

  Value shape_tuple(const TensorValue& t, SourcePos pos) {
    auto tuple = std::make_shared<TupleValue>();
    const int rank = t.capture.rank - static_cast<int>(t.prefix.size());
    for (int i = 0; i < rank; ++i) tuple->items.push_back(shape_value(t, i, pos));
    return Value{std::shared_ptr<const TupleValue>(std::move(tuple))};
  }

  Value call_builtin(const BuiltinValue& b, std::vector<Value> args, std::vector<std::pair<ast::Keyword, Value>> kwargs,
                     SourcePos pos) {
    if (!b.hidden_module.empty() && !args.empty())
      fail(pos, fmt::format("'{0}' is {1} here, not the {0} module: a variable of that name hides it, so {0}.{2}(...) "
                            "is the method {2} of that value; rename the variable",
                            b.hidden_module, describe(ir_value(*b.self)), b.spelling));
    if (b.self) args.insert(args.begin(), ir_value(*b.self));  // x.clamp(...) is clamp(x, ...)
    auto arg = [&](std::size_t i) { return require_ir(args[i], pos, fmt::format("argument {} of {}()", i + 1, b.spelling)); };
    auto unary_float = [&](ir::Intrinsic fn) {
      no_keywords(kwargs, b.spelling);
      expect_args(args, 1, b.spelling, pos);
      return ir_value(ir::Call::make(fn, {cast_to(Type::Float, arg(0), pos)}, pos));
    };
    switch (b.fn) {
      case Builtin::Min:
      case Builtin::Max: {
        no_keywords(kwargs, b.spelling);
        if (args.size() < 2)
          fail(pos, fmt::format("{}() expects at least 2 arguments, got {}", b.spelling, args.size()));
        ir::Expr acc = arg(0);
        for (std::size_t i = 1; i < args.size(); ++i) acc = python_min_max(b.fn == Builtin::Max, acc, arg(i), pos);
        return ir_value(acc);
      }
      case Builtin::Abs: {
        no_keywords(kwargs, b.spelling);
        expect_args(args, 1, b.spelling, pos);
        ir::Expr x = arg(0);
        if (x.type() == Type::Bool) x = cast_to(Type::Int, x, pos);
        return ir_value(ir::Call::make(ir::Intrinsic::Abs, {x}, pos));
      }
      case Builtin::Where:
        no_keywords(kwargs, b.spelling);
        expect_args(args, 3, b.spelling, pos);
        return ir_value(python_select(arg(0), arg(1), arg(2), pos));
      case Builtin::Clamp: {
        std::optional<ir::Expr> lo, hi;
        if (args.empty() || args.size() > 3) fail(pos, fmt::format("{}() takes 1 to 3 arguments ({} given)", b.spelling, args.size()));
        auto bound = [&](const Value& v) -> std::optional<ir::Expr> {
          if (std::holds_alternative<NoneValue>(v.v)) return std::nullopt;
          return require_ir(v, pos, fmt::format("a bound of {}()", b.spelling));
        };
        if (args.size() > 1) lo = bound(args[1]);
        if (args.size() > 2) hi = bound(args[2]);
        for (auto& [kw, v] : kwargs) {
          if (kw.name == "min" && args.size() <= 1) lo = bound(v);
          else if (kw.name == "max" && args.size() <= 2) hi = bound(v);
          else fail(kw.pos, fmt::format("{}() got an unexpected keyword argument '{}'", b.spelling, kw.name));
        }
        if (!lo && !hi) fail(pos, fmt::format("{}() needs at least one of min or max", b.spelling));
        ir::Expr x = arg(0);
        if (lo) x = python_min_max(true, x, *lo, pos);
        if (hi) x = python_min_max(false, x, *hi, pos);
        return ir_value(x);
      }
      case Builtin::Exp: return unary_float(ir::Intrinsic::Exp);
      case Builtin::Exp2: return unary_float(ir::Intrinsic::Exp2);
      case Builtin::Log: return unary_float(ir::Intrinsic::Log);
      case Builtin::Log2: return unary_float(ir::Intrinsic::Log2);
      case Builtin::Log1p: return unary_float(ir::Intrinsic::Log1p);
      case Builtin::Sqrt: return unary_float(ir::Intrinsic::Sqrt);
      case Builtin::Rsqrt: return unary_float(ir::Intrinsic::Rsqrt);
      case Builtin::Tanh: return unary_float(ir::Intrinsic::Tanh);
      case Builtin::Sigmoid: return unary_float(ir::Intrinsic::Sigmoid);
      case Builtin::Sin: return unary_float(ir::Intrinsic::Sin);
      case Builtin::Cos: return unary_float(ir::Intrinsic::Cos);
      case Builtin::Tan: return unary_float(ir::Intrinsic::Tan);
      case Builtin::TanhApprox: return unary_float(ir::Intrinsic::TanhApprox);
      case Builtin::Erf: return unary_float(ir::Intrinsic::Erf);
      case Builtin::Floor: return unary_float(ir::Intrinsic::Floor);
      case Builtin::Ceil: return unary_float(ir::Intrinsic::Ceil);
      case Builtin::FloorInt:
      case Builtin::CeilInt: {
        no_keywords(kwargs, b.spelling);
        expect_args(args, 1, b.spelling, pos);
        ir::Expr x = arg(0);
        if (x.type() != Type::Float) return ir_value(cast_to(Type::Int, x, pos));
        return ir_value(ir::Call::make(b.fn == Builtin::FloorInt ? ir::Intrinsic::FloorToInt : ir::Intrinsic::CeilToInt,
                                       {x}, pos));
      }
      case Builtin::ToFloat:
      case Builtin::ToInt:
      case Builtin::ToBool: {
        no_keywords(kwargs, b.spelling);
        expect_args(args, 1, b.spelling, pos);
        Type t = b.fn == Builtin::ToFloat ? Type::Float : b.fn == Builtin::ToInt ? Type::Int : Type::Bool;
        return ir_value(cast_to(t, arg(0), pos));
      }
      case Builtin::AndMasks:
      case Builtin::OrMasks: {
        no_keywords(kwargs, b.spelling);
        auto m = std::make_shared<MaskCombinator>();
        m->is_and = b.fn == Builtin::AndMasks;
        for (std::size_t i = 0; i < args.size(); ++i) {
          if (!args[i].callable())
            fail(pos, fmt::format("{}() arguments must be mask functions; argument {} is {}", b.spelling, i + 1,
                                  describe(args[i])));
          m->masks.push_back(std::move(args[i]));
        }
        return Value{std::shared_ptr<const MaskCombinator>(std::move(m))};
      }
      case Builtin::NoopMask:
        no_keywords(kwargs, b.spelling);
        expect_args(args, 4, b.spelling, pos);
        return ir_value(ir::BoolImm::make(true, pos));
      case Builtin::Sign:
      case Builtin::Relu:
      case Builtin::Silu:
      case Builtin::Gelu:
      case Builtin::Softplus: {
        if (b.fn != Builtin::Softplus && b.fn != Builtin::Gelu) no_keywords(kwargs, b.spelling);
        expect_args(args, 1, b.spelling, pos);
        return ir_value(activation(b, arg(0), kwargs, pos));
      }
      case Builtin::DivMod: {
        no_keywords(kwargs, b.spelling);
        expect_args(args, 2, b.spelling, pos);
        auto t = std::make_shared<TupleValue>();
        t->items.push_back(ir_value(python_binary(ast::BinOp::FloorDiv, arg(0), arg(1), pos, errors())));
        t->items.push_back(ir_value(python_binary(ast::BinOp::Mod, arg(0), arg(1), pos, errors())));
        return Value{std::shared_ptr<const TupleValue>(std::move(t))};
      }
      case Builtin::Partial: {
        if (args.empty() || !args[0].callable())
          fail(pos, fmt::format("the first argument of {}() must be a function", b.spelling));
        return Value{std::make_shared<const PartialValue>(PartialValue{std::move(args), std::move(kwargs)})};
      }
      case Builtin::NoOpDecorator:
        if (args.size() == 1 && kwargs.empty()) return args[0];
        return Value{b};
      case Builtin::ToType: {
        no_keywords(kwargs, b.spelling);
        expect_args(args, 2, b.spelling, pos);
        auto d = std::get_if<DTypeValue>(&args[1].v);
        if (!d) fail(pos, fmt::format("{}() takes a dtype such as torch.float32; got {}", b.spelling, describe(args[1])));
        return ir_value(cast_to(d->type, arg(0), pos));
      }
      case Builtin::TorchTensor: {  // a 0-dim tensor of one number is that number (dtype= converts it)
        expect_args(args, 1, b.spelling, pos);
        ir::Expr x = arg(0);
        for (const auto& [kw, v] : kwargs) {
          if (kw.name == "device" || kw.name == "requires_grad") continue;
          auto d = std::get_if<DTypeValue>(&v.v);
          if (kw.name != "dtype" || !d)
            fail(kw.pos, fmt::format("{}() takes dtype=, device= and requires_grad= keywords; got '{}'", b.spelling, kw.name));
          x = cast_to(d->type, x, pos);
        }
        return ir_value(x);
      }
      case Builtin::Identity:
        no_keywords(kwargs, b.spelling);
        expect_args(args, 1, b.spelling, pos);
        return ir_value(arg(0));
    }
    fail(pos, "unknown builtin");
  }

  // The options of F.softplus (beta=, threshold=) and F.gelu (approximate=), then the function.
  ir::Expr activation(const BuiltinValue& b, const ir::Expr& x, const std::vector<std::pair<ast::Keyword, Value>>& kwargs,
                      SourcePos pos) const {
    if (b.fn == Builtin::Sign) return sign_of(x, pos);
    if (b.fn == Builtin::Relu) return relu(x, pos);
    if (b.fn == Builtin::Silu) return silu(x, pos);
    if (b.fn == Builtin::Gelu) {
      bool tanh_form = false;
      for (const auto& [kw, v] : kwargs) {
        auto mode = std::get_if<StringValue>(&v.v);
        if (kw.name != "approximate" || !mode || (mode->value != "none" && mode->value != "tanh"))
          fail(kw.pos, fmt::format("{}() takes only approximate='none' or approximate='tanh'", b.spelling));
        tanh_form = mode->value == "tanh";
      }
      return gelu(x, tanh_form, pos);
    }
    ir::Expr beta = ir::FloatImm::make(1.0, pos), threshold = ir::FloatImm::make(20.0, pos);
    for (const auto& [kw, v] : kwargs) {
      ir::Expr e = cast_to(Type::Float, require_ir(v, kw.pos, fmt::format("'{}' of {}()", kw.name, b.spelling)), pos);
      if (kw.name == "beta") beta = e;
      else if (kw.name == "threshold") threshold = e;
      else fail(kw.pos, fmt::format("{}() got an unexpected keyword argument '{}'", b.spelling, kw.name));
    }
    return softplus(x, beta, threshold, pos);
  }

  // ---- expressions ---------------------------------------------------------------------------

  Value lookup(const std::string& name, SourcePos pos, const ScopePtr& scope) {
    for (const Scope* s = scope.get(); s; s = s->parent.get()) {
      ++searched;
      if (const Value* v = s->names.find(name)) return *v;
      if (s->frame_locals && s->frame_locals->count(name))
        fail(pos, fmt::format("local variable '{}' is referenced before assignment", name));
    }
    if (auto b = find_builtin(Namespace::Bare, name)) return Value{BuiltinValue{*b, name, nullptr}};
    // torch and math are always available, as if imported.
    if (name == "torch") return Value{ModuleValue{Namespace::Torch, "torch"}};
    if (name == "math") return Value{ModuleValue{Namespace::Math, "math"}};
    if (std::find(function_names_.begin(), function_names_.end(), name) != function_names_.end())
      fail(pos, fmt::format("recursion is not supported: '{}' calls itself", name));
    std::vector<std::string> candidates;
    for (const Scope* s = scope.get(); s; s = s->parent.get())
      s->names.for_each([&](const std::string& n, const Value&) { candidates.push_back(n); });
    for (auto& n : builtin_names(Namespace::Bare)) candidates.push_back(n);
    if (std::string provider = import_providing(name); !provider.empty())
      fail(pos, fmt::format("name '{}' is not defined; '{}' would provide it", name, provider));
    std::string hint = dsl::closest_name(name, candidates);
    fail(pos, fmt::format("name '{}' is not defined{}", name, hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
  }

  ir::Expr convert_annotated(const Value& v, Type t, SourcePos pos, const std::string& name) const {
    ir::Expr e = require_ir(v, pos, fmt::format("the value of '{}'", name));
    if (t == Type::Bool && e.type() != Type::Bool)
      fail(pos, fmt::format("'{}' is annotated 'bool' but is assigned {}", name, ir::type_name(e.type())));
    if (t == Type::Int && e.type() == Type::Float)
      fail(pos, fmt::format("'{}' is annotated 'int' but is assigned float", name));
    return cast_to(t, e, pos);
  }

  Value eval(const ast::Expr& e, const ScopePtr& scope) {
    return std::visit([&](const auto& n) { return eval_node(n, e, scope); }, e.node);
  }

  Value eval_node(const ast::IntLit& n, const ast::Expr& e, const ScopePtr&) { return ir_value(ir::IntImm::make(n.value, e.pos)); }
  Value eval_node(const ast::FloatLit& n, const ast::Expr& e, const ScopePtr&) {
    return ir_value(ir::FloatImm::make(n.value, e.pos));
  }
  Value eval_node(const ast::BoolLit& n, const ast::Expr& e, const ScopePtr&) { return ir_value(ir::BoolImm::make(n.value, e.pos)); }
  Value eval_node(const ast::NoneLit&, const ast::Expr&, const ScopePtr&) { return Value{NoneValue{}}; }
  Value eval_node(const ast::StringLit& n, const ast::Expr&, const ScopePtr&) { return Value{StringValue{n.value}}; }
  Value eval_node(const ast::UnsupportedExpr& n, const ast::Expr& e, const ScopePtr&) {
    fail(e.pos, fmt::format("{} are not supported", n.what));
  }
  Value eval_node(const ast::Name& n, const ast::Expr& e, const ScopePtr& scope) {
    Value v = lookup(n.id, e.pos, scope);
    if (auto t = std::get_if<TensorValue>(&v.v); t && t->number) t->number = element_of(t->capture, e.pos);  // read here
    return v;
  }

  Value eval_node(const ast::Attribute& n, const ast::Expr& e, const ScopePtr& scope) {
    Value base = eval(*n.value, scope);
    if (auto m = std::get_if<ModuleValue>(&base.v)) return member(*m, n.attr, n.attr_pos, e.pos);
    if (auto t = std::get_if<TensorValue>(&base.v)) {
      if (n.attr == "ndim") return ir_value(ir::IntImm::make(t->capture.rank - static_cast<std::int64_t>(t->prefix.size()), e.pos));
      if (n.attr == "shape") return shape_tuple(*t, e.pos);
      if (find_method(n.attr) && !t->number) fail(n.attr_pos, unread_tensor_message(*t));  // table.abs()
    }
    if (auto x = base.expr()) {
      if (auto fn = find_method(n.attr)) {
        BuiltinValue method{*fn, n.attr, std::make_shared<const ir::Expr>(*x)};
        if (auto name = std::get_if<ast::Name>(&n.value->node))
          if (auto ns = find_module(name->id); ns && find_builtin(*ns, n.attr)) method.hidden_module = name->id;
        return Value{std::move(method)};
      }
      fail(n.attr_pos, fmt::format("{} has no method '{}'; numbers have the methods listed in the language reference", describe(base), n.attr));
    }
    fail(n.attr_pos, fmt::format("attributes are only supported on modules and numbers; '{}' is {}", n.attr, describe(base)));
  }

  // What `m.attr` (and `from m import attr`) means.
  Value member(const ModuleValue& m, const std::string& attr, SourcePos attr_pos, SourcePos pos) const {
    const std::string spelled = m.name + "." + attr;
    if (auto c = find_constant(m.ns, attr)) return ir_value(ir::FloatImm::make(*c, pos));
    if (auto b = find_builtin(m.ns, attr)) return Value{BuiltinValue{*b, spelled, nullptr}};
    if (auto sub = find_module(std::string(module_path(m.ns)) + "." + attr)) return Value{ModuleValue{*sub, spelled}};
    if (auto kind = find_named_only(m.ns, attr)) return Value{NamedOnlyValue{*kind, spelled}};
    if (auto type = find_dtype(m.ns, attr)) return Value{DTypeValue{*type, spelled}};
    std::string hint = known_but_unsupported(m.ns, attr) ? "" : dsl::closest_name(attr, builtin_names(m.ns));
    fail(attr_pos, fmt::format("'{}' is not supported{}", spelled,
                               hint.empty() ? "" : fmt::format("; did you mean '{}.{}'?", m.name, hint)));
  }

  Value eval_node(const ast::Unary& n, const ast::Expr& e, const ScopePtr& scope) {
    Value v = eval(*n.operand, scope);
    if (n.op == ast::UnOp::Not && !v.expr()) return ir_value(ir::BoolImm::make(!*static_truth(v), e.pos));
    return ir_value(python_unary(n.op, require_ir(v, n.operand->pos, fmt::format("the operand of '{}'", ast::spelling(n.op))),
                                 e.pos, errors()));
  }

  Value eval_node(const ast::Binary& n, const ast::Expr& e, const ScopePtr& scope) {
    std::string what = fmt::format("an operand of '{}'", ast::spelling(n.op));
    ir::Expr a = require_ir(eval(*n.lhs, scope), n.lhs->pos, what);
    ir::Expr b = require_ir(eval(*n.rhs, scope), n.rhs->pos, what);
    return ir_value(python_binary(n.op, a, b, e.pos, errors()));
  }

  Value eval_node(const ast::BoolChain& n, const ast::Expr& e, const ScopePtr& scope) {
    // flexjit's and/or always produce a bool (Python's would return an operand).
    bool is_and = n.op == ast::BoolOp::And;
    ir::Expr acc;
    for (const auto& operand : n.values) {
      Value v = eval(*operand, scope);
      ir::Expr b;
      if (auto known = v.expr() ? std::optional<bool>{} : static_truth(v)) b = ir::BoolImm::make(*known, operand->pos);
      else b = truthy(*v.expr(), operand->pos);
      acc = acc ? ir::Binary::make(is_and ? ir::BinaryOp::And : ir::BinaryOp::Or, acc, b, e.pos) : b;
    }
    return ir_value(acc);
  }

  Value eval_node(const ast::Compare& n, const ast::Expr& e, const ScopePtr& scope) {
    Value left = eval(*n.first, scope);
    ir::Expr acc;
    for (const auto& [op, rhs] : n.rest) {
      Value right = eval(*rhs, scope);
      ir::Expr c;
      bool identity = op == ast::CmpOp::Is || op == ast::CmpOp::IsNot;
      if (identity && (!left.expr() || !right.expr())) {
        // `x is None` is decidable at compile time: numbers are never None.
        bool same = std::holds_alternative<NoneValue>(left.v) && std::holds_alternative<NoneValue>(right.v);
        c = ir::BoolImm::make(op == ast::CmpOp::Is ? same : !same, e.pos);
      } else {
        std::string what = fmt::format("an operand of '{}'", ast::spelling(op));
        c = python_compare(op, require_ir(left, e.pos, what), require_ir(right, rhs->pos, what), e.pos, errors());
      }
      acc = acc ? ir::Binary::make(ir::BinaryOp::And, acc, c, e.pos) : c;
      left = std::move(right);
    }
    return ir_value(acc);
  }

  Value eval_node(const ast::Ternary& n, const ast::Expr& e, const ScopePtr& scope) {
    Value cond = eval(*n.cond, scope);
    if (auto known = static_truth(cond)) return eval(*known ? *n.then_value : *n.else_value, scope);
    return select_values(*cond.expr(), eval(*n.then_value, scope), eval(*n.else_value, scope), n.cond->pos);
  }

  // A runtime condition chooses between numbers, or item by item between tuples of one length.
  Value select_values(const ir::Expr& cond, const Value& t, const Value& f, SourcePos pos) {
    if (t.expr() && f.expr()) return ir_value(python_select(cond, *t.expr(), *f.expr(), pos));
    const TupleValue* tt = t.tuple();
    const TupleValue* ft = f.tuple();
    if (tt && ft && tt->items.size() == ft->items.size()) {
      auto out = std::make_shared<TupleValue>();
      for (std::size_t i = 0; i < tt->items.size(); ++i) out->items.push_back(select_values(cond, tt->items[i], ft->items[i], pos));
      return Value{std::shared_ptr<const TupleValue>(std::move(out))};
    }
    fail(pos, fmt::format("a condition known only at run time cannot choose between {} and {}", describe(t), describe(f)));
  }

  Value eval_node(const ast::Lambda& n, const ast::Expr& e, const ScopePtr& scope) {
    return Value{FunctionValue{"<lambda>", &n.params, nullptr, n.body.get(), &n, e.pos, scope}};
  }

  Value eval_node(const ast::Call& n, const ast::Expr& e, const ScopePtr& scope) {
    if (auto a = std::get_if<ast::Attribute>(&n.callee->node)) {
      Value base = eval(*a->value, scope);
      if (auto t = std::get_if<TensorValue>(&base.v))
        if (auto v = tensor_method(*t, a->attr, n, e.pos, scope)) return *v;
    }
    if (auto v = python_len(n, scope)) return *v;
    Value callee = eval(*n.callee, scope);
    // float("inf") / float("-inf") / float("nan"): the one place a string means something.
    if (auto b = std::get_if<BuiltinValue>(&callee.v); b && b->fn == Builtin::ToFloat && n.args.size() == 1) {
      if (auto s = std::get_if<ast::StringLit>(&n.args[0]->node)) return ir_value(float_from_string(*s, n.args[0]->pos));
    }
    // torch.compile(f) is f; lru_cache(maxsize=None) and the like are decorators, options unread.
    if (auto b = std::get_if<BuiltinValue>(&callee.v); b && b->fn == Builtin::NoOpDecorator) {
      if (n.args.size() == 1 && n.keywords.empty()) return eval(*n.args[0], scope);
      return callee;
    }
    std::vector<Value> args;
    for (const auto& a : n.args) args.push_back(eval(*a, scope));
    std::vector<std::pair<ast::Keyword, Value>> kwargs;
    for (const auto& k : n.keywords) kwargs.emplace_back(k, eval(*k.value, scope));
    std::string spelled = callee_spelling(*n.callee);
    return call(callee, std::move(args), std::move(kwargs), e.pos, spelled);
  }

  // len(t) is t.shape[0]; len(tuple) its number of items. Only Python's own len (not a name the
  // program binds).
  std::optional<Value> python_len(const ast::Call& n, const ScopePtr& scope) {
    auto name = std::get_if<ast::Name>(&n.callee->node);
    if (!name || name->id != "len") return std::nullopt;
    for (const Scope* s = scope.get(); s; s = s->parent.get())
      if (s->names.contains("len")) return std::nullopt;
    if (n.args.size() != 1 || !n.keywords.empty()) fail(n.callee->pos, "len() takes exactly one argument");
    Value v = eval(*n.args[0], scope);
    if (auto t = std::get_if<TensorValue>(&v.v)) return shape_value(*t, 0, n.args[0]->pos);
    if (auto t = v.tuple()) return ir_value(ir::IntImm::make(static_cast<std::int64_t>(t->items.size()), n.args[0]->pos));
    fail(n.args[0]->pos, fmt::format("len() takes a captured tensor or a tuple, got {}", describe(v)));
  }

  static std::string callee_spelling(const ast::Expr& e) {
    if (auto n = std::get_if<ast::Name>(&e.node)) return n->id;
    if (auto a = std::get_if<ast::Attribute>(&e.node)) return callee_spelling(*a->value) + "." + a->attr;
    return "expression";
  }

  ir::Expr float_from_string(const ast::StringLit& s, SourcePos pos) const {
    std::string v;
    for (char c : s.value) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double inf = std::numeric_limits<double>::infinity();
    if (v == "inf" || v == "+inf" || v == "infinity" || v == "+infinity") return ir::FloatImm::make(inf, pos);
    if (v == "-inf" || v == "-infinity") return ir::FloatImm::make(-inf, pos);
    if (v == "nan") return ir::FloatImm::make(std::numeric_limits<double>::quiet_NaN(), pos);
    fail(pos, fmt::format("float() accepts only the strings 'inf', '-inf' and 'nan', got '{}'", s.value));
  }

  Value eval_node(const ast::Tuple& n, const ast::Expr&, const ScopePtr& scope) {
    auto t = std::make_shared<TupleValue>();
    for (const auto& item : n.items) t->items.push_back(eval(*item, scope));
    return Value{std::shared_ptr<const TupleValue>(std::move(t))};
  }

  Value tuple_item(const TupleValue& t, const ast::Subscript& n, const ast::Expr& e, const ScopePtr& scope) {
    if (n.indices.size() != 1) fail(e.pos, "a tuple is indexed with one index");
    ir::Expr i = ir::simplify(require_ir(eval(*n.indices[0], scope), n.indices[0]->pos, "a tuple index"));
    auto k = i.as<ir::IntImm>();
    if (!k) fail(n.indices[0]->pos, "a tuple index must be an integer known at compile time");
    const auto size = static_cast<std::int64_t>(t.items.size());
    const std::int64_t at = k->value < 0 ? k->value + size : k->value;
    if (at < 0 || at >= size) fail(n.indices[0]->pos, fmt::format("tuple index {} out of range (the tuple has {} items)", k->value, size));
    return t.items[static_cast<std::size_t>(at)];
  }

  Value eval_node(const ast::Subscript& n, const ast::Expr& e, const ScopePtr& scope) {
    Value base = eval(*n.value, scope);
    if (auto tuple = base.tuple()) return tuple_item(*tuple, n, e, scope);
    auto t = std::get_if<TensorValue>(&base.v);
    if (!t) fail(n.value->pos, fmt::format("only captured tensors can be indexed; this is {}", describe(base)));
    const ir::Capture& cap = t->capture;
    const std::size_t given = t->prefix.size() + n.indices.size();
    if (given > static_cast<std::size_t>(cap.rank))
      fail(e.pos, fmt::format("tensor '{}' has rank {} but is indexed with {} ind{}", cap.name, cap.rank, given,
                              given == 1 ? "ex" : "ices"));
    std::vector<ir::Expr> idx = t->prefix;
    for (const auto& i : n.indices) {
      ir::Expr x = require_ir(eval(*i, scope), i->pos, "a tensor index");
      if (x.type() == Type::Float)
        fail(i->pos, fmt::format("tensor indices must be int, got float (index of '{}')", cap.name));
      idx.push_back(cast_to(Type::Int, x, i->pos));
    }
    if (idx.size() < static_cast<std::size_t>(cap.rank)) return Value{TensorValue{cap, std::move(idx)}};
    return ir_value(ir::Load::make(cap.name, cap.dtype, std::move(idx), e.pos));
  }

  const dsl::SourceFile& file_;
  ScopePtr globals_;
  ir::Program program_;
  std::map<std::string, std::pair<const char*, int>> declared_at_;  // name -> (what, line)
  struct Activation {
    const void* identity;  // the function's AST node
    const Scope* closure;  // the scope it captured
    bool operator==(const Activation&) const = default;
  };
  std::vector<Activation> inlining_;  // the calls being inlined, outermost first
  std::uint64_t first_node_ = 0;      // ir::nodes_made() when lowering started
  std::uint64_t calls_inlined_ = 0;
  std::vector<std::string> function_names_;
  std::vector<SourcePos> function_pos_;
};

}  // namespace

void drop_unread_shape_values(ir::Program& program) {
  if (std::none_of(program.scalars.begin(), program.scalars.end(),
                   [](const ir::Scalar& s) { return s.is_shape_value(); }))
    return;
  struct Reads : ir::OnceVisitor {
    std::set<std::string> names;
    void visit(const ir::Var* op, const ir::Expr&) override {
      if (op->var_kind == ir::VarKind::Scalar) names.insert(op->name);
    }
  } r;
  for (const std::optional<ir::Mod>* m : {&program.mask_mod, &program.score_mod, &program.sink})
    if (*m) r.walk((*m)->body);
  for (const auto& c : program.checks) r.walk(c.cond);
  std::erase_if(program.scalars, [&](const ir::Scalar& s) { return s.is_shape_value() && !r.names.count(s.name); });
}

ir::Program lower(const dsl::SourceFile& file, const ast::Module& module) { return Lowerer(file).run(module); }

std::uint64_t scopes_searched() { return searched; }

}  // namespace flexjit::compiler

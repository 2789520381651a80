// Default traversals. The dispatch is a switch on NodeKind: nodes carry no virtual accept(),
// which keeps ir.hpp free of visitor types.
#include "ir/ir_visitor.hpp"

#include "ir/internal_error.hpp"

namespace flexjit::ir {
namespace {

// f(node) with e's node as its own type: the one switch over NodeKind.
template <class F>
decltype(auto) with_node(const Expr& e, const char* who, F&& f) {
  switch (e.kind()) {
#define FLEXJIT_IR_DISPATCH(N) \
  case NodeKind::N:            \
    return f(e.as<N>());
    FLEXJIT_IR_NODES(FLEXJIT_IR_DISPATCH)
#undef FLEXJIT_IR_DISPATCH
  }
  internal_error(std::string(who) + ": bad node kind");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// IRVisitor

void IRVisitor::walk(const Expr& e) {
  internal_assert(e, "IRVisitor: undefined expression");
  with_node(e, "IRVisitor", [&](const auto* op) { visit(op, e); });
}

void IRVisitor::descend(const Expr& e) {
  for (const Expr& child : children(e)) walk(child);
}

// ---------------------------------------------------------------------------------------------
// IRMutator

Expr IRMutator::mutate(const Expr& e) {
  internal_assert(e, "IRMutator: undefined expression");
  return with_node(e, "IRMutator", [&](const auto* op) { return visit(op, e); });
}

void OnceVisitor::walk(const Expr& e) {
  if (seen_.insert(e.get()).second) IRVisitor::walk(e);
}

Expr MemoizingMutator::mutate(const Expr& e) {
  const auto it = done_.find(e.get());
  if (it != done_.end()) return it->second.second;
  Expr result = IRMutator::mutate(e);
  done_.emplace(e.get(), std::make_pair(e, result));
  return result;
}

Expr IRMutator::descend(const Expr& e) {
  std::vector<Expr> kids = children(e);
  for (Expr& child : kids) child = mutate(child);
  return kids.empty() ? e : with_children(e, kids);
}

// ---------------------------------------------------------------------------------------------
// Generic children

std::vector<Expr> children(const Expr& e) {
  switch (e.kind()) {
    case NodeKind::IntImm:
    case NodeKind::FloatImm:
    case NodeKind::BoolImm:
    case NodeKind::Var: return {};
    case NodeKind::Load: return e.as<Load>()->indices;
    case NodeKind::Cast: return {e.as<Cast>()->value};
    case NodeKind::Unary: return {e.as<Unary>()->a};
    case NodeKind::Binary: return {e.as<Binary>()->a, e.as<Binary>()->b};
    case NodeKind::Compare: return {e.as<Compare>()->a, e.as<Compare>()->b};
    case NodeKind::Select: return {e.as<Select>()->cond, e.as<Select>()->t, e.as<Select>()->f};
    case NodeKind::Call: return e.as<Call>()->args;
    case NodeKind::Let: return {e.as<Let>()->value, e.as<Let>()->body};
  }
  internal_error("children: bad node kind");
}

Expr with_children(const Expr& e, const std::vector<Expr>& kids) {
  const std::vector<Expr> old = children(e);
  internal_assert(old.size() == kids.size(), "with_children: wrong number of children");
  bool changed = false;
  for (std::size_t i = 0; i < old.size(); ++i) changed = changed || !old[i].same_as(kids[i]);
  if (!changed) return e;
  const SourcePos p = e->pos;
  switch (e.kind()) {
    case NodeKind::Load: return Load::make(e.as<Load>()->tensor, e.as<Load>()->dtype, kids, p);
    case NodeKind::Cast: return Cast::make(e.type(), kids[0], p);
    case NodeKind::Unary: return Unary::make(e.as<Unary>()->op, kids[0], p);
    case NodeKind::Binary: return Binary::make(e.as<Binary>()->op, kids[0], kids[1], p);
    case NodeKind::Compare: return Compare::make(e.as<Compare>()->op, kids[0], kids[1], p);
    case NodeKind::Select: return Select::make(kids[0], kids[1], kids[2], p);
    case NodeKind::Call: return Call::make(e.as<Call>()->fn, kids, p);
    case NodeKind::Let: return Let::make(e.as<Let>()->name, kids[0], kids[1], p);
    default: internal_error("with_children: leaf node has no children");
  }
}

bool is_conditional_child(const Expr& e, std::size_t i) {
  if (const Binary* b = e.as<Binary>()) return i == 1 && (b->op == BinaryOp::And || b->op == BinaryOp::Or);
  if (e.as<Select>()) return i == 1 || i == 2;
  return false;
}

Program transform_mods(Program p, const std::function<Expr(const Expr&)>& pass) {
  for (std::optional<Mod>* m : {&p.mask_mod, &p.score_mod, &p.sink})
    if (*m && (*m)->body) (*m)->body = pass((*m)->body);
  return p;
}

}  // namespace flexjit::ir

#pragma once
// Walking and rewriting IR (Halide's IRVisitor / IRMutator idiom).
//
// IRVisitor::walk(e) dispatches on the node kind to visit(const T*, const Expr&); the default
// visit() walks the children in evaluation order. IRMutator::mutate(e) dispatches the same way;
// the default visit() mutates the children and rebuilds the node only if a child changed,
// returning `e` itself otherwise, so unchanged subtrees stay shared and callers can cheaply
// test `result.same_as(e)`. Rebuilt nodes keep the original node's SourcePos.
//
// Passes derive from these and override the hooks they care about; call the base hook (e.g.
// IRMutator::visit(op, e)) for the default behaviour on the remaining children.
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/ir.hpp"

namespace flexjit::ir {

// The per-node hooks IRVisitor (R = void) and IRMutator (R = Expr) dispatch to, one per node
// kind. Each defaults to descend(e): the visitor walks e's children in evaluation order, the
// mutator mutates them and rebuilds e only if one changed.
template <class R>
class IRNodeHooks {
 public:
  virtual ~IRNodeHooks() = default;

 protected:
#define FLEXJIT_IR_VISIT_HOOK(N) \
  virtual R visit(const N*, const Expr& e) { return descend(e); }
  FLEXJIT_IR_NODES(FLEXJIT_IR_VISIT_HOOK)
#undef FLEXJIT_IR_VISIT_HOOK
  virtual R descend(const Expr& e) = 0;
};

class IRVisitor : public IRNodeHooks<void> {
 public:
  // Visits e (which must be defined). Override to intercept every node.
  virtual void walk(const Expr& e);

 protected:
  void descend(const Expr& e) override;
};

class IRMutator : public IRNodeHooks<Expr> {
 public:
  // Returns the rewritten e (e itself when nothing changed). Override to intercept every node.
  virtual Expr mutate(const Expr& e);

 protected:
  Expr descend(const Expr& e) override;
};

// An IRVisitor that visits each node once, however often the DAG shares it: for passes that
// collect facts (names, uses), where a second visit adds nothing. Linear in the DAG.
class OnceVisitor : public IRVisitor {
 public:
  void walk(const Expr& e) override;

 private:
  std::unordered_set<const Node*> seen_;  // nodes of the walked expression, alive while it is
};

// An IRMutator whose result depends on the node alone (no scope or context): each node is
// rewritten once however often the DAG shares it, so the pass is linear in the DAG. Derive from
// it instead of IRMutator for such passes.
class MemoizingMutator : public IRMutator {
 public:
  Expr mutate(const Expr& e) override;

 protected:
  // For passes with a little context (a scope): drop every remembered result when it changes.
  void forget_results() { done_.clear(); }

 private:
  // Keyed by node; the pair keeps the key node alive, so its address cannot be reused while
  // the entry stands.
  std::unordered_map<const Node*, std::pair<Expr, Expr>> done_;
};

// Generic child access, for passes that treat all nodes alike (hash-consing, counting).
// Children come in evaluation order: Load indices, Cast/Unary operand, Binary/Compare (a, b),
// Select (cond, t, f), Call args, Let (value, body).
std::vector<Expr> children(const Expr& e);
// e with its children replaced (same count and types as children(e)); e itself if all are
// same_as the old ones.
Expr with_children(const Expr& e, const std::vector<Expr>& kids);
// Whether child i of e is evaluated only under a condition: the right operand of And / Or
// (short-circuit) and both branches of a Select. Passes must not hoist a Load out of such a
// position into an unconditional one (the guard may be what keeps its index in range).
bool is_conditional_child(const Expr& e, std::size_t i);

// Applies `pass` to the body of every mod of p.
Program transform_mods(Program p, const std::function<Expr(const Expr&)>& pass);

}  // namespace flexjit::ir

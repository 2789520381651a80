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

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  // Visits e (which must be defined). Override to intercept every node.
  virtual void walk(const Expr& e);

 protected:
  virtual void visit(const IntImm* op, const Expr& e);
  virtual void visit(const FloatImm* op, const Expr& e);
  virtual void visit(const BoolImm* op, const Expr& e);
  virtual void visit(const Var* op, const Expr& e);
  virtual void visit(const Load* op, const Expr& e);
  virtual void visit(const Cast* op, const Expr& e);
  virtual void visit(const Unary* op, const Expr& e);
  virtual void visit(const Binary* op, const Expr& e);
  virtual void visit(const Compare* op, const Expr& e);
  virtual void visit(const Select* op, const Expr& e);
  virtual void visit(const Call* op, const Expr& e);
  virtual void visit(const Let* op, const Expr& e);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  // Returns the rewritten e (e itself when nothing changed). Override to intercept every node.
  virtual Expr mutate(const Expr& e);

 protected:
  virtual Expr visit(const IntImm* op, const Expr& e);
  virtual Expr visit(const FloatImm* op, const Expr& e);
  virtual Expr visit(const BoolImm* op, const Expr& e);
  virtual Expr visit(const Var* op, const Expr& e);
  virtual Expr visit(const Load* op, const Expr& e);
  virtual Expr visit(const Cast* op, const Expr& e);
  virtual Expr visit(const Unary* op, const Expr& e);
  virtual Expr visit(const Binary* op, const Expr& e);
  virtual Expr visit(const Compare* op, const Expr& e);
  virtual Expr visit(const Select* op, const Expr& e);
  virtual Expr visit(const Call* op, const Expr& e);
  virtual Expr visit(const Let* op, const Expr& e);
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

#include "ir/inline_lets.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>

#include "ir/ir_visitor.hpp"

namespace flexjit::ir {
namespace {

// Lowering gives each let a name of its own within a mod, so a node's result does not depend on
// where it is met and is remembered; should a name be bound a second time, the remembered
// results are dropped.
class InlineLets : public MemoizingMutator {
 protected:
  Expr visit(const Var* op, const Expr& e) override {
    if (op->var_kind != VarKind::Let) return e;
    auto it = scope_.find(op->name);
    return it == scope_.end() ? e : it->second;
  }
  Expr visit(const Let* op, const Expr&) override {
    Expr v = mutate(op->value);
    const bool rebound = !bound_.insert(op->name).second;
    if (rebound) forget_results();
    std::optional<Expr> saved;
    if (auto it = scope_.find(op->name); it != scope_.end()) saved = it->second;
    scope_[op->name] = v;
    Expr b = mutate(op->body);
    if (saved) scope_[op->name] = *saved;
    else scope_.erase(op->name);
    if (rebound) forget_results();
    return b;
  }

 private:
  std::map<std::string, Expr> scope_;
  std::set<std::string> bound_;  // every name bound so far
};

}  // namespace

Expr inline_lets(const Expr& e) { return InlineLets().mutate(e); }

}  // namespace flexjit::ir

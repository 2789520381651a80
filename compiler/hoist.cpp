#include "compiler/hoist.hpp"

#include <fmt/format.h>

#include <set>
#include <unordered_map>

namespace flexjit::compiler {
namespace {

struct Info {
  bool invariant = true;       // depends on b, h and scalars only
  bool costly = false;         // contains a load, call, division or power
  bool has_load = false;
  std::set<std::string> free_lets;  // Let names read but not bound inside
};

class Finder {
 public:
  explicit Finder(std::vector<CtaValue>& out) : out_(out) {}

  void select(const ir::Expr& e, bool guarded) {
    const Info& i = info(e);
    if (i.invariant && i.costly && i.free_lets.empty() && !(guarded && i.has_load) && !is_leaf(e)) {
      out_.push_back({e, fmt::format("hz{}", out_.size())});
      return;
    }
    if (auto n = e.as<ir::Load>()) {
      for (const auto& idx : n->indices) select(idx, guarded);
    } else if (auto n = e.as<ir::Cast>()) {
      select(n->value, guarded);
    } else if (auto n = e.as<ir::Unary>()) {
      select(n->a, guarded);
    } else if (auto n = e.as<ir::Binary>()) {
      const bool short_circuit = n->op == ir::BinaryOp::And || n->op == ir::BinaryOp::Or;
      select(n->a, guarded);
      select(n->b, guarded || short_circuit);
    } else if (auto n = e.as<ir::Compare>()) {
      select(n->a, guarded);
      select(n->b, guarded);
    } else if (auto n = e.as<ir::Select>()) {
      select(n->cond, guarded);
      select(n->t, true);
      select(n->f, true);
    } else if (auto n = e.as<ir::Call>()) {
      for (const auto& a : n->args) select(a, guarded);
    } else if (auto n = e.as<ir::Let>()) {
      select(n->value, guarded);
      select(n->body, guarded);
    }
  }

 private:
  static bool is_leaf(const ir::Expr& e) {
    return e.as<ir::Var>() || e.as<ir::IntImm>() || e.as<ir::FloatImm>() || e.as<ir::BoolImm>();
  }

  void merge(Info& into, const Info& from) {
    into.invariant = into.invariant && from.invariant;
    into.costly = into.costly || from.costly;
    into.has_load = into.has_load || from.has_load;
    into.free_lets.insert(from.free_lets.begin(), from.free_lets.end());
  }

  const Info& info(const ir::Expr& e) {
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    Info i;
    if (auto n = e.as<ir::Var>()) {
      if (n->var_kind == ir::VarKind::Let) {
        i.free_lets.insert(n->name);
        auto it = let_invariant_.find(n->name);
        i.invariant = it != let_invariant_.end() && it->second;
      } else if (n->var_kind == ir::VarKind::Param) {
        i.invariant = n->name == ir::kParamBatch || n->name == ir::kParamHead;
      }  // scalars are invariant
    } else if (auto n = e.as<ir::Load>()) {
      i.costly = i.has_load = true;
      for (const auto& idx : n->indices) merge(i, info(idx));
    } else if (auto n = e.as<ir::Cast>()) {
      merge(i, info(n->value));
    } else if (auto n = e.as<ir::Unary>()) {
      merge(i, info(n->a));
    } else if (auto n = e.as<ir::Binary>()) {
      using ir::BinaryOp;
      i.costly = n->op == BinaryOp::Div || n->op == BinaryOp::FloorDiv || n->op == BinaryOp::Mod || n->op == BinaryOp::Pow;
      merge(i, info(n->a));
      merge(i, info(n->b));
    } else if (auto n = e.as<ir::Compare>()) {
      merge(i, info(n->a));
      merge(i, info(n->b));
    } else if (auto n = e.as<ir::Select>()) {
      merge(i, info(n->cond));
      merge(i, info(n->t));
      merge(i, info(n->f));
    } else if (auto n = e.as<ir::Call>()) {
      i.costly = true;
      for (const auto& a : n->args) merge(i, info(a));
    } else if (auto n = e.as<ir::Let>()) {
      const Info value = info(n->value);
      let_invariant_[n->name] = value.invariant;
      merge(i, value);
      Info body = info(n->body);
      body.free_lets.erase(n->name);
      merge(i, body);
    }
    return memo_[e.get()] = std::move(i);
  }

  std::vector<CtaValue>& out_;
  std::unordered_map<const ir::Node*, Info> memo_;
  std::unordered_map<std::string, bool> let_invariant_;  // Let names are unique within a mod
};

}  // namespace

void find_cta_values(const ir::Expr& body, std::vector<CtaValue>& out) {
  Finder(out).select(body, false);
}

}  // namespace flexjit::compiler

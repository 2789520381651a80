#include "tests/analysis/random_range_mask.hpp"

#include <cmath>
#include <utility>

#include "ir/ir_visitor.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

constexpr ir::CompareOp kOps[] = {ir::CompareOp::LT, ir::CompareOp::LE, ir::CompareOp::GT,
                                  ir::CompareOp::GE, ir::CompareOp::EQ, ir::CompareOp::NE};

}  // namespace

Expr random_atom_mask(std::mt19937_64& rng) {
  const auto& ops = kOps;
  auto side = [&]() -> Expr {
    Expr base = uniform(rng, 0, 1) ? q() : int_scalar("s");
    Expr e = uniform(rng, 0, 1) ? base + c(uniform(rng, -20, 20)) : base - int_scalar("s");
    if (uniform(rng, 0, 3) == 0) e = fdiv(e, c(uniform(rng, 1, 9)));
    if (uniform(rng, 0, 3) == 0) e = e * c(uniform(rng, -2, 2));
    return e;
  };
  auto kv_side = [&]() -> Expr {
    // kv // C as the unknown (solved for the block, then for kv), sometimes negated.
    if (uniform(rng, 0, 3) == 0) {
      Expr e = fdiv(kv(), c(uniform(rng, 1, 9)));
      if (uniform(rng, 0, 1)) e = c(0) - e;
      return uniform(rng, 0, 1) ? e + side() : e;
    }
    Expr e = uniform(rng, 0, 1) ? kv() : c(0) - kv();
    if (uniform(rng, 0, 1)) e = e + side();
    if (uniform(rng, 0, 2) == 0) e = fdiv(e, c(uniform(rng, 1, 9)));
    return e;
  };
  auto atom = [&]() {
    Expr a = kv_side(), b = side();
    if (uniform(rng, 0, 1)) std::swap(a, b);
    return cmp(ops[uniform(rng, 0, 5)], a, b);
  };
  Expr m = atom();
  for (int k = uniform(rng, 0, 2); k > 0; --k) {
    switch (uniform(rng, 0, 3)) {
      case 0: m = m && atom(); break;
      case 1: m = m || atom(); break;
      case 2: m = !m; break;
      default: m = ir::Select::make(atom(), m, atom()); break;
    }
  }
  return m;
}

Expr random_float_and_query_mask(std::mt19937_64& rng) {
  const auto& ops = kOps;
  auto to_float = [](Expr e) { return ir::Cast::make(ir::Type::Float, e); };
  auto iabs = [](Expr x) { return ir::Call::make(ir::Intrinsic::Abs, {x}); };
  const Expr s = int_scalar("s");
  constexpr float k24 = 16777216.0f;
  auto op = [&] { return ops[uniform(rng, 0, 5)]; };
  auto kv_int = [&]() -> Expr {  // an Int holding kv, near the scalar's magnitude sometimes
    switch (uniform(rng, 0, 4)) {
      case 0: return kv() + s;
      case 1: return q() - kv();
      case 2: return iabs(q() - kv());
      case 3: return s - kv();
      default: return kv() + c(uniform(rng, -20, 20));
    }
  };
  auto per_tile_float = [&]() -> Expr {  // a float known per tile: scalars, reads at b and h
    switch (uniform(rng, 0, 4)) {
      case 0: return ir::Var::make("x", ir::Type::Float, ir::VarKind::Scalar) * ir::FloatImm::make(8.0f);
      case 1: return to_float(s) * ir::FloatImm::make(1.0f);
      case 2: return load("tf", ir::DType::Float32, {bv()}) * ir::FloatImm::make(4.0f);
      case 3: return ir::Var::make("x", ir::Type::Float, ir::VarKind::Scalar) * ir::FloatImm::make(k24 / 8.0f);
      default:  // inf or NaN
        return ir::Binary::make(ir::BinaryOp::Div, ir::Var::make("x", ir::Type::Float, ir::VarKind::Scalar),
                                ir::FloatImm::make(0.0f));
    }
  };
  auto bound = [&]() -> Expr {  // a float the kv side is compared with
    switch (uniform(rng, 0, 9)) {
      case 8:
      case 9: return per_tile_float();
      case 0: return ir::FloatImm::make(static_cast<float>(uniform(rng, -40, 200)) + 0.5f * uniform(rng, 0, 1));
      case 1: return ir::FloatImm::make(k24 + static_cast<float>(2 * uniform(rng, -60, 60)));
      case 2: return ir::FloatImm::make(-k24 + static_cast<float>(2 * uniform(rng, -60, 60)));
      case 3: return ir::FloatImm::make(uniform(rng, 0, 1) ? INFINITY : -INFINITY);
      case 4: return ir::FloatImm::make(NAN);
      case 5: return to_float(s);
      case 6: return to_float(q() + s);
      default: return to_float(q() + c(uniform(rng, -30, 30)));
    }
  };
  auto query_term = [&]() -> Expr {
    switch (uniform(rng, 0, 6)) {
      case 5: return cmp(op(), q(), load("ti", ir::DType::Int32, {bv()}) * c(uniform(rng, 1, 9)));
      case 6: return load("tm", ir::DType::Bool, {hv()});
      case 0: return cmp(op(), q(), c(uniform(rng, -5, 90)));
      case 1: return cmp(op(), q() - s, c(uniform(rng, -5, 90)));
      case 2: return cmp(op(), fdiv(q(), c(uniform(rng, 1, 9))), s);
      case 3: return cmp(op(), hv(), c(uniform(rng, 0, 3)));
      default: return bool_scalar("flag");
    }
  };
  auto atom = [&]() -> Expr {
    switch (uniform(rng, 0, 3)) {
      case 0: return query_term();
      case 1: return cmp(op(), kv(), q() + c(uniform(rng, -20, 20)));
      case 2:
        if (uniform(rng, 0, 1)) return cmp(op(), kv(), load("tl", ir::DType::Int64, {hv()}) + c(uniform(rng, -3, 30)));
        [[fallthrough]];
      default: {
        Expr a = to_float(kv_int()), b = bound();
        if (uniform(rng, 0, 1)) std::swap(a, b);
        return cmp(op(), a, b);
      }
    }
  };
  Expr m = atom();
  for (int k = uniform(rng, 0, 3); k > 0; --k) {
    switch (uniform(rng, 0, 4)) {
      case 0: m = m && atom(); break;
      case 1:
      case 2: m = m || atom(); break;
      case 3: m = !m; break;
      default: m = ir::Select::make(atom(), m, atom()); break;
    }
  }
  return m;
}

Expr swap_q_and_kv(const Expr& e) {
  struct Swap : ir::MemoizingMutator {
    Expr visit(const ir::Var* v, const Expr& x) override {
      if (v->var_kind != ir::VarKind::Param) return x;
      if (v->name == ir::kParamQ) return kv();
      if (v->name == ir::kParamKv) return q();
      return x;
    }
  } swap;
  return swap.mutate(e);
}

}  // namespace flexjit::analysis_test

// int_bounds / bool_bounds: a few exact expectations, then soundness on random expressions of every
// node kind: the interpreter's value at any point of the box lies in the computed interval.
#include <gtest/gtest.h>

#include "ir/bounds.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "tests/analysis/random_expr.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using ir::bool_bounds;
using ir::BoundsEnv;
using ir::int_bounds;
using ir::Type;

bool is(IntInterval a, long long lo, long long hi) { return a.lo == lo && a.hi == hi; }
bool is(BoolInterval a, bool can_false, bool can_true) { return a.can_false == can_false && a.can_true == can_true; }

BoundsEnv tile_env(long long q0, long long q1, long long k0, long long k1) {
  BoundsEnv env;
  env.set("b", iv_point(0)).set("h", iv_point(1)).set("q_idx", iv_make(q0, q1)).set("kv_idx", iv_make(k0, k1));
  return env;
}

TEST(Bounds, Exact) {
  const BoundsEnv env = tile_env(10, 20, 0, 5);
  EXPECT_TRUE(is(int_bounds(q() - kv(), env), 5, 20));
  EXPECT_TRUE(is(int_bounds(fdiv(q(), c(8)), env), 1, 2));
  EXPECT_TRUE(is(int_bounds(mod(q(), c(32)), env), 10, 20));
  Expr t0 = let_var("t0", Type::Int);
  EXPECT_TRUE(is(int_bounds(ir::Let::make("t0", q() - kv(), t0 * c(2)), env), 10, 40));
  EXPECT_TRUE(is(int_bounds(int_scalar("unbound"), env), iv_full().lo, iv_full().hi));
  EXPECT_TRUE(is(int_bounds(load("x", ir::DType::Int8, {q()}), env), -128, 127));
  EXPECT_TRUE(is(int_bounds(load("x", ir::DType::UInt8, {q()}), env), 0, 255));
  EXPECT_TRUE(iv_is_full(int_bounds(load("x", ir::DType::Int64, {q()}), env)));
  EXPECT_TRUE(is(int_bounds(ir::Select::make(q() >= kv(), c(1), c(7)), env), 1, 1));
  EXPECT_TRUE(is(int_bounds(ir::Cast::make(Type::Int, kv() < c(3)), env), 0, 1));
  EXPECT_TRUE(is(int_bounds(ir::Call::make(ir::Intrinsic::Abs, {kv() - q()}), env), 5, 20));

  EXPECT_TRUE(is(bool_bounds(q() >= kv(), env), false, true));
  EXPECT_TRUE(is(bool_bounds(kv() > q(), env), true, false));
  EXPECT_TRUE(is(bool_bounds(kv() < c(3), env), true, true));
  EXPECT_TRUE(is(bool_bounds((kv() < c(3)) && (kv() > q()), env), true, false));
  EXPECT_TRUE(is(bool_bounds(!(kv() > q()), env), false, true));
  EXPECT_TRUE(is(bool_bounds(ir::Cast::make(Type::Bool, q()), env), false, true));  // q in [10, 20] != 0
  Expr fl = ir::Cast::make(Type::Float, q());
  EXPECT_TRUE(is(bool_bounds(ir::Compare::make(ir::CompareOp::LT, fl, fl), env), true, true));  // floats: unknown
  EXPECT_TRUE(is(bool_bounds(load("m", ir::DType::Bool, {q()}), env), true, true));
  Expr flag = bool_scalar("flag");
  BoundsEnv with_flag = env;
  with_flag.set("flag", bi_const(false));
  EXPECT_TRUE(is(bool_bounds(ir::Select::make(flag, kv() > q(), q() >= kv()), with_flag), false, true));
  EXPECT_TRUE(is(bool_bounds(ir::Select::make(flag, kv() > q(), q() >= kv()), env), true, true));
}

// Random boxes; sampled points must land inside the computed bounds.
TEST(Bounds, RandomExpressionsAreSound) {
  std::mt19937_64 rng(test_seed(77));
  const ir::Program decls = mask_program("decls", t(), ExprGen::scalars(), ExprGen::captures());
  int checked = 0, exprs = 0, precise = 0;
  for (int round = 0; round < 60; ++round) {
    World w = random_world(decls, rng, 120);
    for (int n = 0; n < 60; ++n) {
      ExprGen gen(rng, uniform(rng, 0, 1) == 1);
      const bool want_bool = uniform(rng, 0, 1) == 1;
      const Expr e = want_bool ? gen.bool_expr(static_cast<int>(uniform(rng, 1, 5)))
                               : gen.int_expr(static_cast<int>(uniform(rng, 1, 5)));
      // A box of positions and scalar values.
      const std::int64_t q0 = uniform(rng, 0, w.Tq - 1), q1 = std::min(w.Tq - 1, q0 + uniform(rng, 0, 40));
      const std::int64_t k0 = uniform(rng, 0, w.Tkv - 1), k1 = std::min(w.Tkv - 1, k0 + uniform(rng, 0, 40));
      const std::int64_t b0 = uniform(rng, 0, w.B - 1), h0 = uniform(rng, 0, w.H - 1);
      const std::int64_t s0 = w.env.scalars.at("s").as_int(), s1 = s0 + uniform(rng, 0, 3) * uniform(rng, 0, 1);
      const int flag_mode = static_cast<int>(uniform(rng, 0, 2));  // false, true, unknown
      BoundsEnv env = tile_env(q0, q1, k0, k1);
      env.set("b", iv_point(b0)).set("h", iv_point(h0)).set("s", iv_make(s0, std::max(s0, s1)));
      if (flag_mode < 2) env.set("flag", bi_const(flag_mode == 1));
      IntInterval ib{};
      BoolInterval bb{};
      if (want_bool) bb = bool_bounds(e, env);
      else ib = int_bounds(e, env);
      ++exprs;
      if (want_bool ? !(bb.can_true && bb.can_false) : !iv_is_full(ib)) ++precise;
      for (int k = 0; k < 24; ++k) {
        ir::Env pe = w.env;
        pe.b = b0;
        pe.h = h0;
        pe.q_idx = uniform(rng, q0, q1);
        pe.kv_idx = uniform(rng, k0, k1);
        pe.scalars["s"] = ir::Value::integer(uniform(rng, s0, std::max(s0, s1)));
        pe.scalars["flag"] = ir::Value::boolean(flag_mode == 2 ? uniform(rng, 0, 1) == 1 : flag_mode == 1);
        const ir::Value v = ir::evaluate(e, pe);
        if (want_bool) {
          ASSERT_TRUE(v.as_bool() ? bb.can_true : bb.can_false)
              << ir::to_string(e) << "\n at q=" << pe.q_idx << " kv=" << pe.kv_idx << " gives " << v.as_bool();
        } else {
          ASSERT_TRUE(ib.lo <= v.as_int() && v.as_int() <= ib.hi)
              << ir::to_string(e) << "\n at q=" << pe.q_idx << " kv=" << pe.kv_idx << " gives " << v.as_int()
              << " outside [" << ib.lo << ", " << ib.hi << "]";
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 80000);
  // Not a soundness property, but a canary: the analysis should decide a fair share of them.
  EXPECT_GT(precise, exprs / 5) << precise << " of " << exprs << " expressions got a useful bound";
}

}  // namespace
}  // namespace flexjit::analysis_test

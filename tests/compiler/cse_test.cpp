// Common-subexpression sharing: output shape, naming, and that guarded loads stay guarded.
#include <gtest/gtest.h>

#include "ir/cse.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "ir_builders.hpp"

namespace {

using namespace ir_test;

Expr doc(Expr idx) { return load("doc", DType::Int32, {std::move(idx)}); }
const Expr n = scalar("n", Type::Int), x = scalar("x", Type::Float), c = scalar("c", Type::Bool);

TEST(Cse, Examples) {
  const Expr slope = load("slopes", DType::Float32, {h()});
  const Expr dist = cast(Type::Float, q() - kv());
  const std::pair<Expr, const char*> cases[] = {
      // the brief's example: doc[q_idx] is loaded once
      {doc(q()) == doc(kv()) && doc(q()) >= i(0), "let t0 = doc[q_idx] in\nt0 == doc[kv_idx] && t0 >= 0"},
      // nothing repeated: unchanged
      {(q() - kv()) < n, "(q_idx - kv_idx) < n"},
      // variables and constants are never shared
      {q() + q() * q(), "q_idx + q_idx * q_idx"},
      // inner subexpressions first; a + b inside a shared (a + b) * c is not shared again
      {(q() + kv()) * n + (q() + kv()) * n, "let t0 = (q_idx + kv_idx) * n in\nt0 + t0"},
      {((q() + kv()) * n + (q() + kv())) - (q() + kv()) * n,
       "let t0 = q_idx + kv_idx in\nlet t1 = t0 * n in\nt1 + t0 - t1"},
      {score() + slope * dist * slope * dist, "let t0 = slopes[h] in\nlet t1 = float(q_idx - kv_idx) in\nscore + t0 * t1 * t0 * t1"},
      // a load used only behind a guard stays behind it, shared inside the guarded region
      {kv() < n && doc(kv()) + doc(kv()) > i(0), "kv_idx < n && (let t0 = doc[kv_idx] in (t0 + t0) > 0)"},
      {select(c, doc(kv()) * doc(kv()), i(0)), "select(c, (let t0 = doc[kv_idx] in t0 * t0), 0)"},
      // loads in different guarded regions are not hoisted above the guards
      {select(c, doc(kv()), doc(kv()) + i(1)), "select(c, doc[kv_idx], doc[kv_idx] + 1)"},
      {(kv() < n && doc(kv()) > i(0)) || (kv() < n && doc(kv()) < i(-5)),
       "let t0 = kv_idx < n in\n(t0 && doc[kv_idx] > 0) || (t0 && doc[kv_idx] < -5)"},
      // ... but an unguarded occurrence makes it safe to compute first
      {doc(kv()) > i(0) && doc(kv()) < n, "let t0 = doc[kv_idx] in\nt0 > 0 && t0 < n"},
      {select(doc(kv()) > i(0), doc(kv()), i(0)), "let t0 = doc[kv_idx] in\nselect(t0 > 0, t0, 0)"},
      // pure expressions in several guarded regions are shared above them
      {select(c, call(Intrinsic::Exp, x) * f(2.0), call(Intrinsic::Exp, x)),
       "let t0 = exp(x) in\nselect(c, t0 * 2.0, t0)"},
      // ... and stay inside when they occur in one region only
      {c && call(Intrinsic::Exp, x) > call(Intrinsic::Exp, x) * f(0.5),
       "c && (let t0 = exp(x) in t0 > (t0 * 0.5))"},
  };
  for (const auto& [e, want] : cases) EXPECT_EQ(to_string(common_subexpressions(e)), want) << to_string(e);
}

TEST(Cse, NamesAvoidExistingVariables) {
  const Expr t0 = scalar("t0", Type::Int);
  const Expr e = (t0 + q()) * (t0 + q());
  EXPECT_EQ(to_string(common_subexpressions(e)), "let t1 = t0 + q_idx in\nt1 * t1");
  EXPECT_EQ(to_string(common_subexpressions(doc(q()) + doc(q()), "cse")), "let cse0 = doc[q_idx] in\ncse0 + cse0");
}

TEST(Cse, InlinesExistingLetsAndIsIdempotent) {
  const Expr e = doc(q()) == doc(kv()) && doc(q()) >= i(0);
  const Expr once = common_subexpressions(e);
  const Expr twice = common_subexpressions(once);
  EXPECT_TRUE(equal(once, twice)) << to_string(once) << "\nvs\n" << to_string(twice);
  // An input let whose value repeats is renamed, and an unused one disappears.
  const Expr u = let_var("u", Type::Int);
  EXPECT_EQ(to_string(common_subexpressions(let("u", q() * n, u + u))), "let t0 = q_idx * n in\nt0 + t0");
  EXPECT_EQ(to_string(common_subexpressions(let("u", doc(kv() + i(99)), q()))), "q_idx");
}

TEST(Cse, Deterministic) {
  const Expr e = (q() * n + kv() * n) * (q() * n + kv() * n) + (kv() * n) * (q() * n);
  const std::string first = to_string(common_subexpressions(e));
  for (int k = 0; k < 5; ++k) EXPECT_EQ(to_string(common_subexpressions(e)), first);
  EXPECT_EQ(first, "let t0 = q_idx * n in\nlet t1 = kv_idx * n in\nlet t2 = t0 + t1 in\nt2 * t2 + t1 * t0");
}

TEST(Cse, GuardKeepsLoadInRange) {
  const std::int32_t data[4] = {1, 2, 3, 4};
  Env env;
  env.tensors["doc"] = {DType::Int32, {4}, {}, data};
  env.scalars["n"] = Value::integer(4);
  env.kv_idx = 9;
  const Expr e = (kv() < n && doc(kv()) > i(0)) || (kv() < n && doc(kv()) * doc(kv()) > i(3));
  EXPECT_TRUE(identical(evaluate(e, env), Value::boolean(false)));
  EXPECT_TRUE(identical(evaluate(common_subexpressions(e), env), Value::boolean(false)));
}

}  // namespace

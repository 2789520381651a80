// Simplifier rewrites: input -> expected printed output. Every row is also checked to keep
// the value on a few environments (the property test covers random trees).
#include <gtest/gtest.h>

#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "ir/simplify.hpp"
#include "ir_builders.hpp"

namespace {

using namespace ir_test;

struct Row {
  Expr in;
  const char* want;
};

const std::int32_t kDoc[8] = {0, 0, 1, 1, 1, 2, -1, 3};

std::vector<Env> sample_envs() {
  std::vector<Env> envs;
  for (std::int64_t q : {0, 3, 7})
    for (std::int64_t kv : {0, 2, 7})
      for (float s : {0.0f, -0.0f, 1.5f, -kInf, kNaN}) {
        Env env;
        env.b = 1;
        env.h = 2;
        env.q_idx = q;
        env.kv_idx = kv;
        env.score = s;
        env.scalars["n"] = Value::integer(q - 4);
        env.scalars["m"] = Value::integer(kI64Max - kv);
        env.scalars["x"] = Value::real(s * 3.0f);
        env.scalars["c"] = Value::boolean(q > kv);
        env.scalars["d"] = Value::boolean(q == 3);
        env.tensors["doc"] = {DType::Int32, {8}, {}, kDoc};
        envs.push_back(env);
      }
  return envs;
}

void check(const std::vector<Row>& rows) {
  const std::vector<Env> envs = sample_envs();
  for (const Row& r : rows) {
    const Expr s = simplify(r.in);
    EXPECT_EQ(to_string(s), r.want) << "input: " << to_string(r.in);
    for (const Env& env : envs) {
      Value before, after;
      try {
        before = evaluate(r.in, env);
      } catch (const std::runtime_error&) {
        continue;
      }
      after = evaluate(s, env);
      EXPECT_TRUE(identical(before, after)) << to_string(r.in) << " -> " << to_string(s) << ": " << before << " vs "
                                            << after << " at q=" << env.q_idx << " kv=" << env.kv_idx
                                            << " score=" << env.score;
    }
  }
}

const Expr n = scalar("n", Type::Int), m = scalar("m", Type::Int), x = scalar("x", Type::Float);
const Expr c = scalar("c", Type::Bool), d = scalar("d", Type::Bool);
Expr doc(Expr idx) { return load("doc", DType::Int32, {std::move(idx)}); }

TEST(Simplify, ConstantFolding) {
  check({
      {i(2) + i(3) * i(4), "14"},
      {floordiv(i(-7), i(2)), "-4"},
      {i(-7) % i(3), "2"},
      {floordiv(i(1), i(0)), "0"},
      {i(kI64Max) + i(1), "-9223372036854775808"},
      {i(1) << i(64), "0"},
      {i(-8) >> i(70), "-1"},
      {pow(i(2), i(10)), "1024"},
      {f(0.1) + f(0.2), "0.3"},  // fp32: 0.1f + 0.2f == 0.3f
      {f(1.0) / f(3.0), "0.33333334"},
      {f(1.0) / f(0.0), "inf"},
      {f(0.0) / f(0.0), "nan"},
      {f(-7.0) % f(3.0), "2.0"},
      {cast(Type::Int, f(-2.9)), "-2"},
      {cast(Type::Float, i(16777217)), "16777216.0"},
      {cast(Type::Bool, f(kNaN)), "true"},
      {call(Intrinsic::Sigmoid, f(0.0)), "0.5"},
      {call(Intrinsic::FloorToInt, f(-0.5)), "-1"},
      {call(Intrinsic::Abs, i(kI64Min)), "-9223372036854775808"},
      {min(f(kNaN), f(2.0)), "2.0"},
      {f(kNaN) == f(kNaN), "false"},
      {i(3) < i(4) && B(true), "true"},
      {-(f(0.0)), "-0.0"},
      {!(B(false)), "true"},
      {select(i(1) > i(2), score(), f(2.0) * f(4.0)), "8.0"},
  });
}

TEST(Simplify, IntIdentities) {
  check({
      {q() + i(0), "q_idx"},
      {i(0) + q(), "q_idx"},
      {q() * i(1), "q_idx"},
      {q() * i(0), "0"},
      {i(0) * doc(q()), "0"},
      {q() - q(), "0"},
      {doc(q()) - doc(q()), "0"},
      {q() - i(0), "q_idx"},
      {floordiv(q(), i(1)), "q_idx"},
      {floordiv(q(), i(0)), "0"},
      {floordiv(n, i(-1)), "-n"},
      {q() % i(1), "0"},
      {n % i(0), "0"},
      {pow(n, i(0)), "1"},
      {pow(n, i(1)), "n"},
      {pow(i(1), n), "1"},
      {n & i(0), "0"},
      {n & i(-1), "n"},
      {n | i(0), "n"},
      {n | i(-1), "-1"},
      {n ^ n, "0"},
      {n & n, "n"},
      {n << i(0), "n"},
      {n << i(64), "0"},
      {i(-1) >> n, "-1"},
      {-(-n), "n"},
      {~(~n), "n"},
      {-(q() - kv()), "kv_idx - q_idx"},
      {q() + -kv(), "q_idx - kv_idx"},
      {q() - -kv(), "q_idx + kv_idx"},
      {-q() + kv(), "kv_idx - q_idx"},
      {i(0) - n, "-n"},
      {n * i(-1), "-n"},
      {min(n, n), "n"},
      {max(q(), q()), "q_idx"},
      {(q() + kv()) - kv(), "q_idx"},
      {(q() + kv()) - q(), "kv_idx"},
  });
}

TEST(Simplify, Reassociation) {
  check({
      {(q() + i(3)) - i(1), "q_idx + 2"},
      {(q() + i(3)) + i(-5), "q_idx - 2"},
      {(q() - i(3)) + i(1), "q_idx - 2"},
      {(q() - i(3)) - i(4), "q_idx - 7"},
      {(q() - i(3)) + i(3), "q_idx"},
      {i(5) + q(), "q_idx + 5"},
      {q() + i(-1), "q_idx - 1"},
      {q() - i(-1), "q_idx + 1"},
      {n + i(kI64Min), "n + -9223372036854775808"},
      {(i(10) - q()) + i(5), "15 - q_idx"},
      {i(10) - (q() + i(3)), "7 - q_idx"},
      {i(10) - (q() - i(3)), "13 - q_idx"},
      {i(10) - (i(3) - q()), "q_idx + 7"},
      {(q() * i(4)) * i(8), "q_idx * 32"},
      {i(4) * q(), "q_idx * 4"},
      {floordiv(floordiv(q(), i(4)), i(8)), "q_idx // 32"},
      {min(min(n, i(5)), i(3)), "min(n, 3)"},
      {max(max(n, i(5)), i(3)), "max(n, 5)"},
      {(n % i(8)) % i(8), "n % 8"},
      // Wrap-around is exact modulo 2^64 for + and *, so this is fine for any n.
      {(n + i(kI64Max)) + i(2), "n - 9223372036854775807"},
  });
}

TEST(Simplify, Comparisons) {
  check({
      {q() < q(), "false"},
      {n <= n, "true"},
      {n != n, "false"},
      {c == c, "true"},
      {i(3) < q(), "q_idx > 3"},
      {i(3) >= n, "n <= 3"},
      {!(q() < kv()), "q_idx >= kv_idx"},
      {!(q() >= kv()), "q_idx < kv_idx"},
      {!(x < score()), "!(x < score)"},  // NaN: not x >= score
      {!(x == score()), "x != score"},
      {!(x != score()), "x == score"},
      {x < x, "false"},
      {x == x, "x == x"},  // false for NaN
      {x <= x, "x <= x"},
      {c == B(true), "c"},
      {c == B(false), "!c"},
      {c != B(false), "c"},
      {c != B(true), "!c"},
      // (x + c1) cmp c2 -> x cmp c2 - c1 when x + c1 cannot wrap (parameters are < 2^31)
      {(q() + i(3)) < i(10), "q_idx < 7"},
      {(q() - kv() + i(1)) <= i(0), "(q_idx - kv_idx) <= -1"},
      {(kv() - i(3)) >= i(10), "kv_idx >= 13"},
      {(doc(q()) + i(1)) > i(0), "doc[q_idx] > -1"},
      // ... but not when it might wrap: n is an arbitrary int64 scalar
      {(n + i(3)) < i(10), "(n + 3) < 10"},
      {(m + i(1)) > i(0), "(m + 1) > 0"},
      // == and != are exact under wrap-around (adding a constant is a bijection)
      {(n + i(3)) == i(10), "n == 7"},
      {(n - i(3)) != i(10), "n != 13"},
      // (x - y) cmp 0 -> x cmp y
      {(q() - kv()) >= i(0), "q_idx >= kv_idx"},
      {(n - m) == i(0), "n == m"},
      {(n - m) < i(0), "(n - m) < 0"},
      // decided by ranges: parameters are non-negative positions
      {q() >= i(0), "true"},
      {kv() < i(0), "false"},
      {(q() % i(8)) < i(8), "true"},
      {doc(q()) <= i(2147483647), "true"},
      {(q() - kv()) < i(-3000000000LL), "false"},
  });
}

TEST(Simplify, FloatOnlyExactRewrites) {
  check({
      {score() * f(1.0), "score"},
      {f(1.0) * score(), "score"},
      {score() / f(1.0), "score"},
      {score() * f(-1.0), "-score"},
      {score() - f(0.0), "score"},
      {score() + f(-0.0), "score"},
      {score() + f(0.0), "score + 0.0"},  // not exact for score == -0.0
      {score() * f(0.0), "score * 0.0"},  // NaN, inf, -0.0
      {score() - score(), "score - score"},
      {pow(score(), f(0.0)), "1.0"},
      {pow(f(1.0), score()), "1.0"},
      {-(-score()), "score"},
      {score() + -x, "score - x"},
      {f(2.0) + score(), "score + 2.0"},
      {min(score(), score()), "score"},
      {min(f(2.0), score()), "min(2.0, score)"},
      {(score() + f(1.0)) + f(2.0), "score + 1.0 + 2.0"},  // no Float reassociation
      {call(Intrinsic::Floor, call(Intrinsic::Floor, score())), "floor(score)"},
      {call(Intrinsic::Floor, cast(Type::Float, q())), "float(q_idx)"},
      {call(Intrinsic::Abs, call(Intrinsic::Abs, score())), "abs(score)"},
      {call(Intrinsic::Abs, q() - kv()), "abs(q_idx - kv_idx)"},
      {call(Intrinsic::Abs, q() + i(1)), "q_idx + 1"},
  });
}

TEST(Simplify, Logic) {
  check({
      {c && B(true), "c"},
      {B(true) && c, "c"},
      {c && B(false), "false"},
      {B(false) && doc(kv() + i(100)) > i(0), "false"},
      {c || B(false), "c"},
      {c || B(true), "true"},
      {B(true) || c, "true"},
      {!(!c), "c"},
      {c && c, "c"},
      {c && !c, "false"},
      {!c || c, "true"},
      {c & B(true), "c"},
      {c | B(true), "true"},
      {c ^ B(true), "!c"},
      {c ^ c, "false"},
      {B(true) & c, "c"},
  });
}

TEST(Simplify, Select) {
  check({
      {select(B(true), q(), kv()), "q_idx"},
      {select(B(false), q(), kv()), "kv_idx"},
      {select(c, doc(q()), doc(q())), "doc[q_idx]"},
      {select(c, B(true), B(false)), "c"},
      {select(c, B(false), B(true)), "!c"},
      {select(c, d, B(false)), "c && d"},
      {select(c, B(true), d), "c || d"},
      {select(c, B(false), d), "!c && d"},
      {select(c, d, B(true)), "!c || d"},
      {select(!c, q(), kv()), "select(c, kv_idx, q_idx)"},
      {select(c, select(c, q(), n), kv()), "select(c, q_idx, kv_idx)"},
      {select(c, q(), select(c, n, kv())), "select(c, q_idx, kv_idx)"},
      {select(q() < kv(), q(), kv()), "min(q_idx, kv_idx)"},
      {select(q() <= kv(), kv(), q()), "max(kv_idx, q_idx)"},
      {select(q() > kv(), q(), kv()), "max(q_idx, kv_idx)"},
      {select(x < score(), x, score()), "select(x < score, x, score)"},  // fminf differs for NaN
      // a guarded load stays guarded
      {select(kv() < i(8), doc(kv()), i(-1)), "select(kv_idx < 8, doc[kv_idx], -1)"},
  });
}

TEST(Simplify, Casts) {
  check({
      {cast(Type::Int, q()), "q_idx"},
      {cast(Type::Int, cast(Type::Float, c)), "int(c)"},
      {cast(Type::Float, cast(Type::Int, c)), "float(c)"},
      {cast(Type::Bool, cast(Type::Int, c)), "c"},
      {cast(Type::Bool, cast(Type::Float, n)), "n != 0"},
      {cast(Type::Bool, n), "n != 0"},
      {cast(Type::Bool, x), "x != 0.0"},
      {cast(Type::Int, cast(Type::Float, n)), "int(float(n))"},  // lossy above 2^24
      {cast(Type::Float, cast(Type::Int, x)), "float(int(x))"},  // truncates
  });
}

TEST(Simplify, Lets) {
  const Expr t0 = let_var("t0", Type::Int), t1 = let_var("t1", Type::Int);
  check({
      {let("t0", doc(q()), q()), "q_idx"},
      {let("t0", i(3), t0 + t0), "6"},
      {let("t0", kv(), q() - t0), "q_idx - kv_idx"},
      {let("t0", doc(q()), t0 == doc(kv())), "let t0 = doc[q_idx] in\nt0 == doc[kv_idx]"},
      {let("t0", i(2) + i(2), let("t1", t0 * q(), t1 - t1)), "0"},
  });
}

TEST(Simplify, AttentionMasks) {
  const Expr w = scalar("n", Type::Int);
  check({
      // causal + sliding window written the long way
      {(q() - kv() >= i(0)) && (q() - kv() < w), "q_idx >= kv_idx && (q_idx - kv_idx) < n"},
      // prefix-LM: kv < 4 or causal
      {(kv() + i(1) <= i(4)) || (q() - kv() >= i(0)), "kv_idx <= 3 || q_idx >= kv_idx"},
      // document mask with a bounds guard that is always true
      {(kv() >= i(0)) && doc(q()) == doc(kv()), "doc[q_idx] == doc[kv_idx]"},
      // softcap written with redundant arithmetic
      {f(1.0) * score() * f(1.0) - f(0.0), "score"},
  });
}

TEST(Simplify, ReturnsSameNodeWhenNothingChanges) {
  const Expr e = (q() - kv()) < scalar("n", Type::Int) && doc(q()) == doc(kv());
  EXPECT_TRUE(simplify(e).same_as(e));
}

}  // namespace

// The semantics table: the interpreter is the language's specification.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "ir/internal_error.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "ir_builders.hpp"

namespace {

using namespace ir_test;

Value I(std::int64_t v) { return Value::integer(v); }
Value F(float v) { return Value::real(v); }
Value Bv(bool v) { return Value::boolean(v); }

struct Case {
  Expr e;
  Value want;
};

void check(const std::vector<Case>& cases, const Env& env = {}) {
  for (const Case& c : cases) {
    const Value got = evaluate(c.e, env);
    EXPECT_TRUE(identical(got, c.want)) << to_string(c.e) << " gave " << got << ", want " << c.want;
  }
}

TEST(Interpreter, IntArithmetic) {
  check({
      {floordiv(i(7), i(2)), I(3)},
      {floordiv(i(-7), i(2)), I(-4)},
      {floordiv(i(7), i(-2)), I(-4)},
      {floordiv(i(-7), i(-2)), I(3)},
      {floordiv(i(-8), i(2)), I(-4)},
      {floordiv(i(5), i(0)), I(0)},
      {floordiv(i(kI64Min), i(-1)), I(kI64Min)},
      {i(7) % i(3), I(1)},
      {i(-7) % i(3), I(2)},
      {i(7) % i(-3), I(-2)},
      {i(-7) % i(-3), I(-1)},
      {i(-6) % i(3), I(0)},
      {i(5) % i(0), I(0)},
      {i(kI64Min) % i(-1), I(0)},
      {i(kI64Max) + i(1), I(kI64Min)},
      {i(kI64Min) - i(1), I(kI64Max)},
      {i(kI64Max) * i(2), I(-2)},
      {-i(kI64Min), I(kI64Min)},
      {call(Intrinsic::Abs, i(kI64Min)), I(kI64Min)},
      {call(Intrinsic::Abs, i(-5)), I(5)},
      {pow(i(3), i(4)), I(81)},
      {pow(i(-2), i(3)), I(-8)},
      {pow(i(0), i(0)), I(1)},
      {pow(i(2), i(64)), I(0)},
      {pow(i(3), i(40)), I(static_cast<std::int64_t>(12157665459056928801ULL))},
      {pow(i(2), i(-1)), I(0)},
      {pow(i(1), i(-5)), I(1)},
      {pow(i(-1), i(-3)), I(-1)},
      {pow(i(-1), i(-4)), I(1)},
      {min(i(3), i(-4)), I(-4)},
      {max(i(3), i(-4)), I(3)},
      {i(12) & i(10), I(8)},
      {i(12) | i(10), I(14)},
      {i(12) ^ i(10), I(6)},
      {~i(0), I(-1)},
  });
}

TEST(Interpreter, Shifts) {
  check({
      {i(1) << i(0), I(1)},
      {i(1) << i(62), I(std::int64_t(1) << 62)},
      {i(1) << i(63), I(kI64Min)},
      {i(3) << i(63), I(kI64Min)},
      {i(1) << i(64), I(0)},
      {i(1) << i(-1), I(0)},
      {i(-1) << i(1000), I(0)},
      {i(-8) >> i(1), I(-4)},
      {i(-1) >> i(63), I(-1)},
      {i(kI64Min) >> i(63), I(-1)},
      {i(8) >> i(3), I(1)},
      {i(8) >> i(64), I(0)},
      {i(-8) >> i(64), I(-1)},
      {i(-8) >> i(-1), I(-1)},
      {i(8) >> i(-1), I(0)},
  });
}

TEST(Interpreter, FloatArithmetic) {
  check({
      {f(7.0) / f(2.0), F(3.5f)},
      {floordiv(f(7.0), f(2.0)), F(3.0f)},
      {floordiv(f(-7.0), f(2.0)), F(-4.0f)},
      {f(-7.0) % f(3.0), F(2.0f)},
      {f(7.0) % f(-3.0), F(-2.0f)},
      {f(5.5) % f(2.0), F(1.5f)},
      {f(1.0) / f(0.0), F(kInf)},
      {f(-1.0) / f(0.0), F(-kInf)},
      {f(0.0) / f(0.0), F(kNaN)},
      {f(1.0) % f(0.0), F(kNaN)},
      {pow(f(2.0), f(-1.0)), F(0.5f)},
      {pow(f(kNaN), f(0.0)), F(1.0f)},
      {min(f(kNaN), f(1.0)), F(1.0f)},
      {max(f(1.0), f(kNaN)), F(1.0f)},
      {-f(0.0), F(-0.0f)},
      // every operation rounds to float: 0.1f + 0.2f in fp32, not in double
      {f(0.1) + f(0.2), F(0.1f + 0.2f)},
      {f(16777216.0) + f(1.0), F(16777216.0f)},
      {f(3.4e38) * f(10.0), F(kInf)},
  });
}

TEST(Interpreter, Casts) {
  check({
      {cast(Type::Int, f(2.9)), I(2)},
      {cast(Type::Int, f(-2.9)), I(-2)},
      {cast(Type::Int, f(kNaN)), I(0)},
      {cast(Type::Int, f(kInf)), I(0)},
      {cast(Type::Int, f(-kInf)), I(0)},
      {cast(Type::Int, f(1e30)), I(kI64Max)},
      {cast(Type::Int, f(-1e30)), I(kI64Min)},
      {cast(Type::Int, f(-9223372036854775808.0)), I(kI64Min)},
      {cast(Type::Int, B(true)), I(1)},
      {cast(Type::Float, i(16777217)), F(16777216.0f)},
      {cast(Type::Float, i(kI64Max)), F(9223372036854775808.0f)},
      {cast(Type::Float, B(true)), F(1.0f)},
      {cast(Type::Bool, i(-3)), Bv(true)},
      {cast(Type::Bool, i(0)), Bv(false)},
      {cast(Type::Bool, f(-0.0)), Bv(false)},
      {cast(Type::Bool, f(kNaN)), Bv(true)},
      {call(Intrinsic::FloorToInt, f(-2.5)), I(-3)},
      {call(Intrinsic::CeilToInt, f(-2.5)), I(-2)},
      {call(Intrinsic::CeilToInt, f(kNaN)), I(0)},
      {call(Intrinsic::Floor, f(-2.5)), F(-3.0f)},
      {call(Intrinsic::Ceil, f(2.1)), F(3.0f)},
  });
}

TEST(Interpreter, Intrinsics) {
  check({
      {call(Intrinsic::Exp, f(0.0)), F(1.0f)},
      {call(Intrinsic::Exp2, f(3.0)), F(8.0f)},
      {call(Intrinsic::Log, f(0.0)), F(-kInf)},
      {call(Intrinsic::Log2, f(8.0)), F(3.0f)},
      {call(Intrinsic::Log1p, f(0.0)), F(0.0f)},
      {call(Intrinsic::Sqrt, f(-1.0)), F(kNaN)},
      {call(Intrinsic::Rsqrt, f(4.0)), F(0.5f)},
      {call(Intrinsic::Rsqrt, f(0.0)), F(kInf)},
      {call(Intrinsic::Sigmoid, f(0.0)), F(0.5f)},
      {call(Intrinsic::Sigmoid, f(-1000.0)), F(0.0f)},
      {call(Intrinsic::Sigmoid, f(1000.0)), F(1.0f)},
      {call(Intrinsic::Tanh, f(0.0)), F(0.0f)},
      {call(Intrinsic::Abs, f(-0.0)), F(0.0f)},
      {call(Intrinsic::Sin, f(0.0)), F(0.0f)},
      {call(Intrinsic::Cos, f(0.0)), F(1.0f)},
      {call(Intrinsic::Tan, f(-0.0)), F(-0.0f)},
      {call(Intrinsic::Erf, f(0.0)), F(0.0f)},
      {call(Intrinsic::Erf, f(-100.0)), F(-1.0f)},
      {call(Intrinsic::TanhApprox, f(0.5)), F(std::tanh(0.5f))},
  });
  // Computed in float: sigmoid(x) is 1 / (1 + expf(-x)) with float rounding at each step.
  const float x = 0.37f;
  const float want = 1.0f / (1.0f + std::exp(-x));
  EXPECT_TRUE(identical(evaluate(call(Intrinsic::Sigmoid, f(x)), {}), F(want)));
}

TEST(Interpreter, Comparisons) {
  check({
      {f(kNaN) == f(kNaN), Bv(false)},
      {f(kNaN) != f(kNaN), Bv(true)},
      {f(kNaN) < f(1.0), Bv(false)},
      {f(-0.0) == f(0.0), Bv(true)},
      {B(false) < B(true), Bv(true)},
      {i(-1) < i(0), Bv(true)},
      {i(kI64Min) <= i(kI64Max), Bv(true)},
  });
}

TEST(Interpreter, ParamsScalarsLets) {
  Env env;
  env.b = 1;
  env.h = 2;
  env.q_idx = 10;
  env.kv_idx = 3;
  env.score = 0.5f;
  env.scalars["window"] = I(8);
  env.scalars["scale"] = F(2.0f);
  const Expr w = scalar("window", Type::Int);
  check({{(q() - kv()) < w, Bv(true)},
         {score() * scalar("scale", Type::Float), F(1.0f)},
         {b() + h(), I(3)},
         {let("t0", q() * i(2), let_var("t0", Type::Int) + let_var("t0", Type::Int)), I(40)},
         {let("t0", i(1), let("t1", let_var("t0", Type::Int) + i(1), let_var("t1", Type::Int) * i(10))), I(20)}},
        env);
  EXPECT_THROW(evaluate(scalar("missing", Type::Int), env), std::runtime_error);
  EXPECT_THROW(evaluate(scalar("scale", Type::Int), env), std::runtime_error);  // bound as float
  EXPECT_THROW(evaluate(let_var("t9", Type::Int), env), InternalError);
}

TEST(Interpreter, ShortCircuitAndLazySelect) {
  std::int32_t doc[4] = {5, 5, 7, 7};
  Env env;
  env.tensors["doc"] = TensorBinding{DType::Int32, {4}, {}, doc};
  env.q_idx = 1;
  const Expr n = i(4);
  const Expr guarded = kv() < n && load("doc", DType::Int32, {kv()}) == load("doc", DType::Int32, {q()});
  env.kv_idx = 100;  // out of range: the guard must keep the load from running
  EXPECT_TRUE(identical(evaluate(guarded, env), Bv(false)));
  EXPECT_TRUE(identical(evaluate(kv() >= n || load("doc", DType::Int32, {kv()}) > i(0), env), Bv(true)));
  EXPECT_TRUE(identical(evaluate(select(kv() < n, load("doc", DType::Int32, {kv()}), i(-1)), env), I(-1)));
  env.kv_idx = 0;
  EXPECT_TRUE(identical(evaluate(guarded, env), Bv(true)));
  env.kv_idx = 2;
  EXPECT_TRUE(identical(evaluate(guarded, env), Bv(false)));
}

TEST(Interpreter, LoadsAllDtypes) {
  Env env;
  const std::int8_t i8[2] = {-5, 7};
  const std::uint8_t u8[2] = {200, 1};
  const std::int16_t i16[2] = {-300, 1};
  const std::int64_t i64[2] = {kI64Min, 1};
  const std::uint8_t bools[2] = {0, 2};
  const double f64[2] = {0.1, 1e300};
  const std::uint16_t half[4] = {0x3c00, 0xc000, 0x0001, 0x7c00};  // 1, -2, 2^-24, inf
  const std::uint16_t bf16[2] = {0x3f80, 0xc0a0};                   // 1, -5
  env.tensors["i8"] = {DType::Int8, {2}, {}, i8};
  env.tensors["u8"] = {DType::UInt8, {2}, {}, u8};
  env.tensors["i16"] = {DType::Int16, {2}, {}, i16};
  env.tensors["i64"] = {DType::Int64, {2}, {}, i64};
  env.tensors["bools"] = {DType::Bool, {2}, {}, bools};
  env.tensors["f64"] = {DType::Float64, {2}, {}, f64};
  env.tensors["half"] = {DType::Float16, {4}, {}, half};
  env.tensors["bf16"] = {DType::BFloat16, {2}, {}, bf16};
  check({{load("i8", DType::Int8, {i(0)}), I(-5)},
         {load("u8", DType::UInt8, {i(0)}), I(200)},
         {load("i16", DType::Int16, {i(0)}), I(-300)},
         {load("i64", DType::Int64, {i(0)}), I(kI64Min)},
         {load("bools", DType::Bool, {i(0)}), Bv(false)},
         {load("bools", DType::Bool, {i(1)}), Bv(true)},
         {load("f64", DType::Float64, {i(0)}), F(0.1f)},
         {load("f64", DType::Float64, {i(1)}), F(kInf)},
         {load("half", DType::Float16, {i(0)}), F(1.0f)},
         {load("half", DType::Float16, {i(1)}), F(-2.0f)},
         {load("half", DType::Float16, {i(2)}), F(0x1p-24f)},
         {load("half", DType::Float16, {i(3)}), F(kInf)},
         {load("bf16", DType::BFloat16, {i(0)}), F(1.0f)},
         {load("bf16", DType::BFloat16, {i(1)}), F(-5.0f)}},
        env);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0400), 0x1p-14f);  // smallest normal
  EXPECT_EQ(half_to_float(0x03ff), 1023 * 0x1p-24f);
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(Interpreter, StridedTensorsAndErrors) {
  // A 2x3 view with row stride 4 into a 2x4 buffer.
  const float buf[8] = {0, 1, 2, 99, 10, 11, 12, 99};
  Env env;
  env.tensors["m"] = TensorBinding{DType::Float32, {2, 3}, {4, 1}, buf};
  check({{load("m", DType::Float32, {i(1), i(2)}), F(12.0f)}, {load("m", DType::Float32, {i(0), i(1)}), F(1.0f)}},
        env);
  try {
    evaluate(load("m", DType::Float32, {i(1), i(3)}), env);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "evaluate: index [1, 3] is out of range for tensor 'm' of shape [2, 3]");
  }
  EXPECT_THROW(evaluate(load("m", DType::Float32, {i(-1), i(0)}), env), std::runtime_error);
  EXPECT_THROW(evaluate(load("m", DType::Float32, {i(0)}), env), std::runtime_error);  // rank
  EXPECT_THROW(evaluate(load("m", DType::Float16, {i(0), i(0)}), env), std::runtime_error);  // dtype
  EXPECT_THROW(evaluate(load("nope", DType::Float32, {i(0)}), env), std::runtime_error);
}

TEST(Interpreter, ProgramConveniences) {
  Program p;
  EXPECT_TRUE(eval_mask(p, {}, 0, 0, 0, 5));
  EXPECT_EQ(eval_score(p, {}, 0, 0, 0, 0, 1.25f), 1.25f);
  EXPECT_EQ(eval_sink(p, {}, 0, 0), -kInf);

  const float slopes[2] = {0.5f, 0.25f};
  Env env;
  env.tensors["slopes"] = {DType::Float32, {2}, {}, slopes};
  env.scalars["window"] = I(4);
  p.mask_mod = Mod{ModKind::Mask, {b(), h(), q(), kv()}, q() >= kv() && (q() - kv()) < scalar("window", Type::Int), {}};
  p.score_mod = Mod{ModKind::Score,
                    {score(), b(), h(), q(), kv()},
                    score() + load("slopes", DType::Float32, {h()}) * cast(Type::Float, kv() - q()),
                    {}};
  p.sink = Mod{ModKind::Sink, {b(), h()}, load("slopes", DType::Float32, {h()}) * f(2.0), {}};
  EXPECT_TRUE(eval_mask(p, env, 0, 0, 5, 2));
  EXPECT_FALSE(eval_mask(p, env, 0, 0, 5, 6));
  EXPECT_FALSE(eval_mask(p, env, 0, 0, 5, 1));
  EXPECT_EQ(eval_score(p, env, 0, 1, 5, 2, 1.0f), 1.0f - 0.75f);
  EXPECT_EQ(eval_sink(p, env, 0, 1), 0.5f);
}

TEST(Interpreter, ValueHelpers) {
  EXPECT_TRUE(identical(F(kNaN), F(-kNaN)));
  EXPECT_FALSE(identical(F(0.0f), F(-0.0f)));
  EXPECT_FALSE(identical(I(1), Bv(true)));
  EXPECT_EQ(F(-kInf).to_string(), "-inf");
  EXPECT_EQ(F(0.5f).to_string(), "0.5");
  EXPECT_EQ(I(-3).to_string(), "-3");
  EXPECT_EQ(Bv(true).to_string(), "true");
  EXPECT_THROW(I(1).as_float(), InternalError);
  EXPECT_THROW(eval_binary(BinaryOp::Add, I(1), F(1.0f)), InternalError);
  EXPECT_THROW(eval_binary(BinaryOp::Div, I(1), I(1)), InternalError);
}

}  // namespace

// templates/common/dsl_ops.cuh is what generated kernels call for the language's integer and float
// semantics. Compiled here for the host, it must agree bit for bit with the interpreter (the
// executable spec) on edge cases and random values.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "ir/interpreter.hpp"
#include "templates/common/dsl_ops.cuh"

using namespace flexjit;
using ir::BinaryOp;
using ir::Value;

namespace {

const std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
const std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// long long, as the device ops take it (int64_t is long here, which would be ambiguous).
std::vector<long long> interesting_ints() {
  std::vector<long long> v = {0, 1, -1, 2, -2, 3, -3, 7, -7, 8, -8, 63, 64, -64, 65, 1024, -1024,
                                 kMax, kMin, kMax - 1, kMin + 1, 1LL << 31, -(1LL << 31)};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<long long>(rng()) >> (rng() % 64));
  return v;
}

std::vector<float> interesting_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 3.0f, 1e-30f, -1e30f, 9.3e18f, -9.3e18f,
                          inf, -inf, std::numeric_limits<float>::quiet_NaN(), 123456.789f};
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 100.0f);
  for (int i = 0; i < 200; ++i) v.push_back(n(rng));
  return v;
}

bool same_bits(float a, float b) {
  if (a != a && b != b) return true;
  std::uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

std::int64_t spec_int(BinaryOp op, std::int64_t a, std::int64_t b) {
  return ir::eval_binary(op, Value::integer(a), Value::integer(b)).i;
}
float spec_float(BinaryOp op, float a, float b) { return ir::eval_binary(op, Value::real(a), Value::real(b)).f; }

// The 32-bit versions are used where operands and result fit in 32 bits (the generator proves
// it); there they must give the interpreter's 64-bit result.
TEST(DeviceOps, ThirtyTwoBitOperationsMatchWhereTheyApply) {
  const long long lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
  std::vector<long long> values;
  for (long long v : interesting_ints())
    if (v >= lo && v <= hi) values.push_back(v);
  for (long long v : {lo, lo + 1, hi, hi - 1, 64LL, -64LL, 63LL, -65LL}) values.push_back(v);
  auto fits = [&](std::int64_t r) { return r >= lo && r <= hi; };
  std::int64_t checked = 0;
  for (long long a : values) {
    for (long long b : values) {
      SCOPED_TRACE(testing::Message() << a << " op " << b);
      const int x = static_cast<int>(a), y = static_cast<int>(b);
      if (const auto r = spec_int(BinaryOp::FloorDiv, a, b); fits(r)) {
        ASSERT_EQ(ops::floordiv32(x, y), r);
        ++checked;
      }
      if (const auto r = spec_int(BinaryOp::Mod, a, b); fits(r)) {
        ASSERT_EQ(ops::mod32(x, y), r);
        ++checked;
      }
      ASSERT_EQ(ops::min32(x, y), spec_int(BinaryOp::Min, a, b));
      ASSERT_EQ(ops::max32(x, y), spec_int(BinaryOp::Max, a, b));
    }
    if (a != lo) {
      ASSERT_EQ(ops::abs32(static_cast<int>(a)), ops::abs(a));
    }
  }
  EXPECT_GT(checked, 10000);
}

// A 64-bit operand compared with a 32-bit one whose values lie in [lo, hi] is clamped into
// [lo - 1, hi + 1] (codegen/cuda_expr.cpp): every comparison, either way round, must then give
// the interpreter's 64-bit answer, for any 64-bit value.
TEST(DeviceOps, ClampedComparisonsMatchTheInterpreter) {
  const long long i32max = std::numeric_limits<std::int32_t>::max();
  const std::vector<std::pair<long long, long long>> ranges = {
      {-(i32max - 1), i32max - 1}, {0, i32max - 1}, {0, 0}, {-5, 5}, {0, 4095}};
  std::vector<long long> wide = interesting_ints();
  for (long long v : {i32max, i32max + 1, -i32max, -i32max - 1, -i32max - 2}) wide.push_back(v);
  std::int64_t checked = 0;
  for (const auto& [lo, hi] : ranges) {
    std::vector<long long> narrow = {lo, lo + 1, hi, hi - 1, (lo + hi) / 2};
    for (long long w : wide) narrow.push_back(w);
    for (long long w : wide) {
      const int c = ops::clamp32(w, static_cast<int>(lo - 1), static_cast<int>(hi + 1));
      for (long long x : narrow) {
        if (x < lo || x > hi) continue;
        SCOPED_TRACE(testing::Message() << x << " vs " << w << " in [" << lo << ", " << hi << "]");
        for (int op = 0; op <= static_cast<int>(ir::CompareOp::NE); ++op) {
          const auto cmp = static_cast<ir::CompareOp>(op);
          auto device = [&](long long a, long long b) {
            switch (cmp) {
              case ir::CompareOp::LT: return a < b;
              case ir::CompareOp::LE: return a <= b;
              case ir::CompareOp::GT: return a > b;
              case ir::CompareOp::GE: return a >= b;
              case ir::CompareOp::EQ: return a == b;
              case ir::CompareOp::NE: return a != b;
            }
            return false;
          };
          ASSERT_EQ(device(x, c), ir::eval_compare(cmp, Value::integer(x), Value::integer(w)).b);
          ASSERT_EQ(device(c, x), ir::eval_compare(cmp, Value::integer(w), Value::integer(x)).b);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(DeviceOps, IntegerOperationsMatchTheInterpreter) {
  auto values = interesting_ints();
  for (long long a : values) {
    for (long long b : values) {
      SCOPED_TRACE(testing::Message() << a << " op " << b);
      ASSERT_EQ(ops::add(a, b), spec_int(BinaryOp::Add, a, b));
      ASSERT_EQ(ops::sub(a, b), spec_int(BinaryOp::Sub, a, b));
      ASSERT_EQ(ops::mul(a, b), spec_int(BinaryOp::Mul, a, b));
      ASSERT_EQ(ops::floordiv(a, b), spec_int(BinaryOp::FloorDiv, a, b));
      ASSERT_EQ(ops::mod(a, b), spec_int(BinaryOp::Mod, a, b));
      ASSERT_EQ(ops::min(a, b), spec_int(BinaryOp::Min, a, b));
      ASSERT_EQ(ops::max(a, b), spec_int(BinaryOp::Max, a, b));
      ASSERT_EQ(ops::shl(a, b), spec_int(BinaryOp::Shl, a, b));
      ASSERT_EQ(ops::shr(a, b), spec_int(BinaryOp::Shr, a, b));
      if (b >= 0 && b < 100) {
        ASSERT_EQ(ops::ipow(a, b), spec_int(BinaryOp::Pow, a, b));
      }
    }
    ASSERT_EQ(ops::neg(a), ir::eval_unary(ir::UnaryOp::Neg, Value::integer(a)).i);
    ASSERT_EQ(ops::abs(a), ir::eval_call(ir::Intrinsic::Abs, {Value::integer(a)}).i);
    ASSERT_TRUE(same_bits(ops::to_float(a), ir::eval_cast(ir::Type::Float, Value::integer(a)).f));
  }
}

TEST(DeviceOps, FloatOperationsMatchTheInterpreter) {
  auto values = interesting_floats();
  for (float a : values) {
    for (float b : values) {
      SCOPED_TRACE(testing::Message() << a << " op " << b);
      ASSERT_TRUE(same_bits(ops::floordiv(a, b), spec_float(BinaryOp::FloorDiv, a, b)));
      ASSERT_TRUE(same_bits(ops::mod(a, b), spec_float(BinaryOp::Mod, a, b)));
      ASSERT_TRUE(same_bits(ops::fmin(a, b), spec_float(BinaryOp::Min, a, b)));
      ASSERT_TRUE(same_bits(ops::fmax(a, b), spec_float(BinaryOp::Max, a, b)));
    }
    SCOPED_TRACE(testing::Message() << "x = " << a);
    ASSERT_EQ(ops::to_int(a), ir::eval_cast(ir::Type::Int, Value::real(a)).i);
    ASSERT_EQ(ops::floor_to_int(a), ir::eval_call(ir::Intrinsic::FloorToInt, {Value::real(a)}).i);
    ASSERT_EQ(ops::ceil_to_int(a), ir::eval_call(ir::Intrinsic::CeilToInt, {Value::real(a)}).i);
    ASSERT_TRUE(same_bits(ops::sigmoid(a), ir::eval_call(ir::Intrinsic::Sigmoid, {Value::real(a)}).f));
    ASSERT_TRUE(same_bits(ops::rsqrt(a), ir::eval_call(ir::Intrinsic::Rsqrt, {Value::real(a)}).f));
    ASSERT_TRUE(same_bits(ops::fabs(a), ir::eval_call(ir::Intrinsic::Abs, {Value::real(a)}).f));
    ASSERT_TRUE(same_bits(ops::sin(a), ir::eval_call(ir::Intrinsic::Sin, {Value::real(a)}).f));
    ASSERT_TRUE(same_bits(ops::cos(a), ir::eval_call(ir::Intrinsic::Cos, {Value::real(a)}).f));
    ASSERT_TRUE(same_bits(ops::tan(a), ir::eval_call(ir::Intrinsic::Tan, {Value::real(a)}).f));
  }
}

}  // namespace

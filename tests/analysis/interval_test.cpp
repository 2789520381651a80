// The interval primitives of templates/common/interval.cuh: table-driven cases for the tricky corners
// (floor semantics of negatives, overflow, divisors holding 0), then a randomized soundness check
// of every Int op against the interpreter's own scalar semantics (ir::eval_binary).
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "ir/interpreter.hpp"
#include "templates/common/interval.cuh"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using ir::BinaryOp;

constexpr long long kMin = std::numeric_limits<long long>::min();
constexpr long long kMax = std::numeric_limits<long long>::max();

IntInterval I(long long lo, long long hi) { return iv_make(lo, hi); }
bool same(IntInterval a, IntInterval b) { return a.lo == b.lo && a.hi == b.hi; }
std::string str(IntInterval a) { return "[" + std::to_string(a.lo) + ", " + std::to_string(a.hi) + "]"; }

struct BinCase {
  const char* what;
  IntInterval (*fn)(IntInterval, IntInterval);
  IntInterval a, b, want;
};

TEST(IntervalPrimitives, Table) {
  const BinCase cases[] = {
      {"add", iv_add, I(1, 2), I(10, 20), I(11, 22)},
      {"add overflow -> full", iv_add, I(0, kMax), I(1, 1), iv_full()},
      {"add underflow -> full", iv_add, I(kMin, 0), I(-1, -1), iv_full()},
      {"add at the edge stays exact", iv_add, I(kMax - 5, kMax - 1), I(1, 1), I(kMax - 4, kMax)},
      {"sub", iv_sub, I(0, 10), I(3, 5), I(-5, 7)},
      {"sub overflow -> full", iv_sub, I(0, 1), I(kMin, kMin), iv_full()},
      {"mul signs", iv_mul, I(-3, 2), I(-5, 4), I(-12, 15)},
      {"mul overflow -> full", iv_mul, I(1LL << 32, 1LL << 32), I(1LL << 31, 1LL << 31), iv_full()},
      {"mul kMin * -1 -> full", iv_mul, I(kMin, kMin), I(-1, -1), iv_full()},
      {"mul kMin * 1 exact", iv_mul, I(kMin, kMin), I(1, 1), I(kMin, kMin)},
      {"floordiv negatives floor", iv_floordiv, I(-7, -7), I(2, 2), I(-4, -4)},
      {"floordiv by negative", iv_floordiv, I(7, 7), I(-2, -2), I(-4, -4)},
      {"floordiv neg by neg", iv_floordiv, I(-7, -7), I(-2, -2), I(3, 3)},
      {"floordiv range", iv_floordiv, I(-5, 9), I(2, 3), I(-3, 4)},
      {"floordiv by 0 is 0", iv_floordiv, I(5, 9), I(0, 0), I(0, 0)},
      {"floordiv divisor holds 0", iv_floordiv, I(10, 20), I(0, 5), I(0, 20)},
      {"floordiv divisor spans 0", iv_floordiv, I(10, 20), I(-2, 5), I(-20, 20)},
      {"floordiv kMin // -1 -> full", iv_floordiv, I(kMin, 0), I(-1, -1), iv_full()},
      {"mod positive divisor", iv_mod, I(-7, -7), I(3, 3), I(2, 2)},
      {"mod negative divisor", iv_mod, I(7, 7), I(-3, -3), I(-2, -2)},
      {"mod within one period", iv_mod, I(10, 12), I(8, 8), I(2, 4)},
      {"mod across a period", iv_mod, I(6, 9), I(8, 8), I(0, 7)},
      {"mod smaller than divisor", iv_mod, I(0, 5), I(8, 100), I(0, 5)},
      {"mod by 0 is 0", iv_mod, I(5, 9), I(0, 0), I(0, 0)},
      {"mod divisor holds 0", iv_mod, I(5, 9), I(0, 4), I(0, 3)},
      {"mod divisor spans 0", iv_mod, I(5, 9), I(-3, 4), I(-2, 3)},
      {"min", iv_min, I(1, 10), I(3, 5), I(1, 5)},
      {"max", iv_max, I(1, 10), I(3, 5), I(3, 10)},
      {"bitand non-negative", iv_bitand, I(0, 12), I(3, 200), I(0, 12)},
      {"bitand one non-negative", iv_bitand, I(-50, 50), I(0, 7), I(0, 7)},
      {"bitor non-negative", iv_bitor, I(4, 5), I(1, 9), I(4, 15)},
      {"bitxor non-negative", iv_bitxor, I(0, 5), I(0, 9), I(0, 15)},
      {"bitxor signed -> full", iv_bitxor, I(-1, 5), I(0, 9), iv_full()},
      {"shl", iv_shl, I(-3, 5), I(1, 2), I(-12, 20)},
      {"shl out-of-range count -> full", iv_shl, I(1, 1), I(0, 64), iv_full()},
      {"shr", iv_shr, I(-9, 17), I(1, 2), I(-5, 8)},
      {"shr out-of-range count", iv_shr, I(-9, 17), I(-1, 80), I(-9, 17)},
      {"pow", iv_pow, I(2, 3), I(3, 3), I(8, 27)},
      {"pow unknown exponent -> full", iv_pow, I(2, 3), I(1, 3), iv_full()},
  };
  for (const auto& k : cases) {
    const IntInterval got = k.fn(k.a, k.b);
    EXPECT_TRUE(same(got, k.want)) << k.what << ": got " << str(got) << ", want " << str(k.want);
  }
}

TEST(IntervalPrimitives, UnaryTable) {
  EXPECT_TRUE(same(iv_neg(I(-3, 7)), I(-7, 3)));
  EXPECT_TRUE(same(iv_neg(I(kMin, 0)), iv_full()));  // -kMin wraps
  EXPECT_TRUE(same(iv_neg(I(kMin + 1, 0)), I(0, kMax)));
  EXPECT_TRUE(same(iv_abs(I(-3, 7)), I(0, 7)));
  EXPECT_TRUE(same(iv_abs(I(-9, -2)), I(2, 9)));
  EXPECT_TRUE(same(iv_abs(I(kMin, 5)), iv_full()));
  EXPECT_TRUE(same(iv_bitnot(I(-3, 7)), I(-8, 2)));
  EXPECT_TRUE(same(iv_from_bool(bi_const(true)), I(1, 1)));
  EXPECT_TRUE(same(iv_from_bool(bi_unknown()), I(0, 1)));
}

TEST(IntervalPrimitives, Compares) {
  auto is = [](BoolInterval b, bool can_false, bool can_true) {
    return b.can_false == can_false && b.can_true == can_true;
  };
  EXPECT_TRUE(is(iv_lt(I(0, 3), I(4, 9)), false, true));
  EXPECT_TRUE(is(iv_lt(I(0, 4), I(4, 9)), true, true));
  EXPECT_TRUE(is(iv_lt(I(9, 12), I(4, 9)), true, false));
  EXPECT_TRUE(is(iv_le(I(0, 4), I(4, 9)), false, true));
  EXPECT_TRUE(is(iv_gt(I(10, 12), I(4, 9)), false, true));
  EXPECT_TRUE(is(iv_ge(I(9, 12), I(4, 9)), false, true));
  EXPECT_TRUE(is(iv_eq(I(3, 3), I(3, 3)), false, true));
  EXPECT_TRUE(is(iv_eq(I(0, 3), I(4, 9)), true, false));
  EXPECT_TRUE(is(iv_ne(I(0, 3), I(3, 9)), true, true));
  EXPECT_TRUE(is(bi_and(bi_const(true), bi_unknown()), true, true));
  EXPECT_TRUE(is(bi_and(bi_const(false), bi_unknown()), true, false));
  EXPECT_TRUE(is(bi_or(bi_const(true), bi_unknown()), false, true));
  EXPECT_TRUE(is(bi_xor(bi_const(true), bi_const(true)), true, false));
  EXPECT_TRUE(is(bi_select(bi_const(true), bi_const(false), bi_const(true)), true, false));
  EXPECT_TRUE(is(bi_select(bi_unknown(), bi_const(false), bi_const(true)), true, true));
  EXPECT_TRUE(same(iv_select(bi_const(false), I(1, 2), I(5, 6)), I(5, 6)));
  EXPECT_TRUE(same(iv_select(bi_unknown(), I(1, 2), I(5, 6)), I(1, 6)));
  EXPECT_EQ(bi_tile_class(bi_const(false)), 0);
  EXPECT_EQ(bi_tile_class(bi_const(true)), 1);
  EXPECT_EQ(bi_tile_class(bi_unknown()), 2);
}

// ---- Randomized: op(x, y) lies in iv_op(A, B) for x in A, y in B, with the interpreter's op.

long long random_endpoint(std::mt19937_64& rng) {
  switch (uniform(rng, 0, 6)) {
    case 0: return uniform(rng, -10, 10);
    case 1: return uniform(rng, -300, 300);
    case 2: return uniform(rng, 0, 1) ? kMin + uniform(rng, 0, 3) : kMax - uniform(rng, 0, 3);
    case 3: return (uniform(rng, 0, 1) ? 1 : -1) * (1LL << uniform(rng, 0, 62)) + uniform(rng, -2, 2);
    case 4: return uniform(rng, -70, 70);
    default: return uniform(rng, -3000000000LL, 3000000000LL);
  }
}

IntInterval random_interval(std::mt19937_64& rng) {
  long long a = random_endpoint(rng), b = uniform(rng, 0, 2) == 0 ? a : random_endpoint(rng);
  if (uniform(rng, 0, 2) == 0) b = a > kMax - 5 ? a : a + uniform(rng, 0, 5);  // narrow
  return a <= b ? I(a, b) : I(b, a);
}

long long sample(std::mt19937_64& rng, IntInterval a) {
  switch (uniform(rng, 0, 3)) {
    case 0: return a.lo;
    case 1: return a.hi;
    default: return std::uniform_int_distribution<long long>(a.lo, a.hi)(rng);
  }
}

IntInterval apply(BinaryOp op, IntInterval a, IntInterval b) {
  switch (op) {
    case BinaryOp::Add: return iv_add(a, b);
    case BinaryOp::Sub: return iv_sub(a, b);
    case BinaryOp::Mul: return iv_mul(a, b);
    case BinaryOp::FloorDiv: return iv_floordiv(a, b);
    case BinaryOp::Mod: return iv_mod(a, b);
    case BinaryOp::Pow: return iv_pow(a, b);
    case BinaryOp::Min: return iv_min(a, b);
    case BinaryOp::Max: return iv_max(a, b);
    case BinaryOp::BitAnd: return iv_bitand(a, b);
    case BinaryOp::BitOr: return iv_bitor(a, b);
    case BinaryOp::BitXor: return iv_bitxor(a, b);
    case BinaryOp::Shl: return iv_shl(a, b);
    case BinaryOp::Shr: return iv_shr(a, b);
    default: return iv_full();
  }
}

TEST(IntervalPrimitives, RandomizedSoundnessAgainstInterpreter) {
  std::mt19937_64 rng(test_seed(20240601));
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub,    BinaryOp::Mul,    BinaryOp::FloorDiv, BinaryOp::Mod,
                          BinaryOp::Pow, BinaryOp::Min,    BinaryOp::Max,    BinaryOp::BitAnd,   BinaryOp::BitOr,
                          BinaryOp::BitXor, BinaryOp::Shl, BinaryOp::Shr};
  int checks = 0;
  for (BinaryOp op : ops) {
    for (int i = 0; i < 4000; ++i) {
      IntInterval a = random_interval(rng), b = random_interval(rng);
      if (op == BinaryOp::Pow) {  // Int pow takes a small non-negative exponent
        a = I(uniform(rng, -5, 20), 0);
        a.hi = a.lo + uniform(rng, 0, 30);
        b = uniform(rng, 0, 1) ? iv_point(uniform(rng, 0, 70)) : I(0, uniform(rng, 0, 9));
      }
      if ((op == BinaryOp::Shl || op == BinaryOp::Shr) && uniform(rng, 0, 1)) {  // plausible shift counts
        b.lo = uniform(rng, -2, 40);
        b.hi = b.lo + uniform(rng, 0, 30);
      }
      const IntInterval r = apply(op, a, b);
      ASSERT_LE(r.lo, r.hi);
      for (int j = 0; j < 16; ++j) {
        const long long x = sample(rng, a), y = sample(rng, b);
        const long long v = ir::eval_binary(op, ir::Value::integer(x), ir::Value::integer(y)).as_int();
        ASSERT_TRUE(r.lo <= v && v <= r.hi) << "op " << static_cast<int>(op) << " " << str(a) << " " << str(b)
                                            << " -> " << str(r) << " but " << x << ", " << y << " gives " << v;
        ++checks;
      }
    }
  }
  // Unary ops and compares.
  for (int i = 0; i < 20000; ++i) {
    const IntInterval a = random_interval(rng), b = random_interval(rng);
    const long long x = sample(rng, a), y = sample(rng, b);
    const long long neg = ir::eval_unary(ir::UnaryOp::Neg, ir::Value::integer(x)).as_int();
    const IntInterval rn = iv_neg(a);
    ASSERT_TRUE(rn.lo <= neg && neg <= rn.hi) << str(a);
    const long long ab = ir::eval_call(ir::Intrinsic::Abs, {ir::Value::integer(x)}).as_int();
    const IntInterval ra = iv_abs(a);
    ASSERT_TRUE(ra.lo <= ab && ab <= ra.hi) << str(a);
    const long long bn = ir::eval_unary(ir::UnaryOp::BitNot, ir::Value::integer(x)).as_int();
    ASSERT_TRUE(iv_bitnot(a).lo <= bn && bn <= iv_bitnot(a).hi);
    const ir::CompareOp cops[] = {ir::CompareOp::LT, ir::CompareOp::LE, ir::CompareOp::GT,
                                  ir::CompareOp::GE, ir::CompareOp::EQ, ir::CompareOp::NE};
    const BoolInterval rs[] = {iv_lt(a, b), iv_le(a, b), iv_gt(a, b), iv_ge(a, b), iv_eq(a, b), iv_ne(a, b)};
    for (int k = 0; k < 6; ++k) {
      const bool v = ir::eval_compare(cops[k], ir::Value::integer(x), ir::Value::integer(y)).as_bool();
      ASSERT_TRUE(v ? rs[k].can_true : rs[k].can_false) << k << " " << str(a) << " " << str(b);
    }
    checks += 9;
  }
  EXPECT_GT(checks, 800000);
}

}  // namespace
}  // namespace flexjit::analysis_test

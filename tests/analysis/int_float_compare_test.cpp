// float(x) op f as a condition on the int64 x: the thresholds, at small values and where fp32
// stops holding every integer (2^24), checked against the conversion itself.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/int_float_compare.hpp"

namespace flexjit::compiler {
namespace {

constexpr std::int64_t k24 = std::int64_t{1} << 24;
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

TEST(IntFloatCompare, Thresholds) {
  EXPECT_EQ(first_int_at_least(28.0f), 28);
  EXPECT_EQ(first_int_above(28.0f), 29);
  EXPECT_EQ(first_int_at_least(27.5f), 28);
  EXPECT_EQ(first_int_above(27.5f), 28);
  EXPECT_EQ(first_int_at_least(-2.5f), -2);
  EXPECT_EQ(first_int_above(-3.0f), -2);
  // 2^24 + 1 converts to 2^24 (ties to even), so the first int above 2^24 is 2^24 + 2.
  EXPECT_EQ(first_int_above(16777216.0f), k24 + 2);
  EXPECT_EQ(first_int_at_least(16777218.0f), k24 + 2);
  EXPECT_EQ(first_int_at_least(16777216.0f), k24);
  EXPECT_EQ(first_int_at_least(-16777216.0f), -k24 - 1);  // -2^24 - 1 converts to -2^24
  EXPECT_EQ(first_int_at_least(-INFINITY), kMin);
  EXPECT_EQ(first_int_at_least(INFINITY), std::nullopt);
  EXPECT_EQ(first_int_above(9.2233720e18f), std::nullopt);  // 2^63: no int64 converts above it
}

TEST(IntFloatCompare, AgreesWithTheConversion) {
  const float bounds[] = {0.0f, 28.0f, 27.5f, -1.5f, 16777216.0f, 16777218.0f, -16777216.0f, 3.0e9f, 1.0e18f};
  const ir::CompareOp ops[] = {ir::CompareOp::LT, ir::CompareOp::LE, ir::CompareOp::GT, ir::CompareOp::GE,
                               ir::CompareOp::EQ};
  for (float f : bounds)
    for (ir::CompareOp op : ops) {
      const auto s = int_solutions(op, f);
      ASSERT_TRUE(s.has_value());
      // Around the bound and around each end, x is in the interval exactly when float(x) op f.
      std::vector<std::int64_t> probes;
      for (std::int64_t center : {static_cast<std::int64_t>(f), s->lo.value_or(0), s->hi.value_or(0)})
        for (std::int64_t d = -4; d <= 4; ++d) probes.push_back(center + d);
      for (std::int64_t x : probes) {
        const float fx = static_cast<float>(x);
        bool holds = false;
        switch (op) {
          case ir::CompareOp::LT: holds = fx < f; break;
          case ir::CompareOp::LE: holds = fx <= f; break;
          case ir::CompareOp::GT: holds = fx > f; break;
          case ir::CompareOp::GE: holds = fx >= f; break;
          default: holds = fx == f; break;
        }
        const bool in = !s->never && (!s->lo || x >= *s->lo) && (!s->hi || x < *s->hi);
        EXPECT_EQ(in, holds) << "float(" << x << ") op " << f;
      }
    }
  EXPECT_TRUE(int_solutions(ir::CompareOp::EQ, 27.5f)->never);
  EXPECT_EQ(int_solutions(ir::CompareOp::NE, 1.0f), std::nullopt);
  EXPECT_EQ(int_solutions(ir::CompareOp::LT, NAN), std::nullopt);
}

}  // namespace
}  // namespace flexjit::compiler

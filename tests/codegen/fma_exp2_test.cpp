// templates/common/fma_exp2.cuh, compiled for the host as the kernels compile it: 2^x within its
// stated error over the softmax's range, +0 below -125 and for -inf, exact powers of two apart from
// the cubic's value at 0.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "templates/common/fma_exp2.cuh"

namespace {

constexpr double kRelativeError = 7.5e-5;  // the header's bound for its cubic

TEST(FmaExp2, FollowsExp2OverTheSoftmaxRange) {
  double worst = 0;
  for (int i = 0; i <= 1 << 20; ++i) {
    // -125 .. 8: the lowest result the cubic keeps, up to the softmax's rescale slack.
    const float x = -125.f + 133.f * static_cast<float>(i) / static_cast<float>(1 << 20);
    const double want = std::exp2(static_cast<double>(x));
    worst = std::max(worst, std::abs(static_cast<double>(flexjit::fma_exp2(x)) / want - 1.0));
  }
  EXPECT_LE(worst, kRelativeError);
  EXPECT_GT(worst, 1e-6);  // a cubic, not the library's exp2: the sweep reached its error
}

TEST(FmaExp2, IntegerPartGoesToTheExponent) {
  const double at_zero = flexjit::fma_exp2(0.f);
  for (int j = -124; j <= 30; ++j)
    EXPECT_EQ(static_cast<double>(flexjit::fma_exp2(static_cast<float>(j))), std::ldexp(at_zero, j)) << j;
}

TEST(FmaExp2, NothingBelowTheRangeOrMasked) {
  EXPECT_EQ(flexjit::fma_exp2(-125.5f), 0.f);
  EXPECT_EQ(flexjit::fma_exp2(-1000.f), 0.f);
  EXPECT_EQ(flexjit::fma_exp2(-std::numeric_limits<float>::infinity()), 0.f);
  EXPECT_FALSE(std::signbit(flexjit::fma_exp2(-std::numeric_limits<float>::infinity())));
  EXPECT_GT(flexjit::fma_exp2(-125.f), 0.f);
}

}  // namespace

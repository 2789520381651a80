// flexjit/fp8.hpp: the host's float <-> FP8 E4M3 (e4m3fn) conversions, checked against the format
// written out here from its definition (1 sign, 4 exponent bits of bias 7, 3 mantissa bits;
// subnormals m * 2^-9; S.1111.111 is NaN; no infinities) and a brute-force nearest-value search,
// never against the functions themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "flexjit/fp8.hpp"

namespace flexjit {
namespace {

bool is_nan_code(unsigned code) { return (code & 0x7fu) == 0x7fu; }

// The value of `code` from the format's definition, in double (every e4m3 value is exact in it).
double e4m3_value(unsigned code) {
  const double sign = (code & 0x80u) ? -1.0 : 1.0;
  const unsigned exponent = (code >> 3) & 0xfu, mantissa = code & 0x7u;
  if (exponent == 0) return sign * mantissa / 512.0;
  double power = 1.0;  // 2^(exponent - 7)
  for (unsigned i = 0; i < exponent; ++i) power *= 2.0;
  return sign * (1.0 + mantissa / 8.0) * power / 128.0;
}

// The code nearest to a finite `x` by searching all finite codes of its sign, ties to the even
// code (last mantissa bit 0); magnitudes past 448 saturate to it.
unsigned nearest_code(double x) {
  const unsigned sign = std::signbit(x) ? 0x80u : 0x00u;
  const double magnitude = std::fabs(x);
  unsigned best = 0;
  for (unsigned c = 1; c <= 0x7e; ++c) {
    const double d = std::fabs(e4m3_value(c) - magnitude), best_d = std::fabs(e4m3_value(best) - magnitude);
    if (d < best_d || (d == best_d && (c & 1u) == 0)) best = c;
  }
  return sign | best;
}

TEST(Fp8Convert, EveryCodeDecodesToItsDefinedValue) {
  for (unsigned code = 0; code < 256; ++code) {
    const float got = e4m3_bits_to_float(static_cast<std::uint8_t>(code));
    if (is_nan_code(code)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << code;
      continue;
    }
    EXPECT_EQ(static_cast<double>(got), e4m3_value(code)) << std::hex << code;
    EXPECT_EQ(std::signbit(got), code >= 0x80) << std::hex << code;  // -0 is 0x80
  }
  // Landmarks of the format, written out by hand.
  EXPECT_EQ(e4m3_bits_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_bits_to_float(0xfe), -448.0f);
  EXPECT_EQ(e4m3_bits_to_float(0x01), 0x1p-9f);  // the smallest subnormal
  EXPECT_EQ(e4m3_bits_to_float(0x07), 7 * 0x1p-9f);  // the largest subnormal
  EXPECT_EQ(e4m3_bits_to_float(0x08), 0x1p-6f);  // the smallest normal
  EXPECT_EQ(e4m3_bits_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_bits_to_float(0x39), 1.125f);
  EXPECT_EQ(e4m3_bits_to_float(0xc0), -2.0f);
  EXPECT_EQ(e4m3_bits_to_float(0x77), 240.0f);  // exponent 15 still holds finite values
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0xff)));
  // A NaN keeps its sign, so it encodes back to its own code.
  EXPECT_FALSE(std::signbit(e4m3_bits_to_float(0x7f)));
  EXPECT_TRUE(std::signbit(e4m3_bits_to_float(0xff)));
  EXPECT_EQ(float_to_e4m3_bits(e4m3_bits_to_float(0xff)), 0xff);
  EXPECT_EQ(kFp8E4m3Max, 448.0f);
}

TEST(Fp8Convert, EveryValueRoundTrips) {
  for (unsigned code = 0; code < 256; ++code) {
    if (is_nan_code(code)) continue;
    const auto value = static_cast<float>(e4m3_value(code));
    EXPECT_EQ(float_to_e4m3_bits(value), code) << std::hex << code << " (" << value << ")";
  }
  EXPECT_EQ(float_to_e4m3_bits(-0.0f), 0x80);
  EXPECT_EQ(float_to_e4m3_bits(0.0f), 0x00);
}

// The exact midpoint between neighbouring values goes to the even code; a float just above it
// goes up and one just below it goes down, for both signs.
TEST(Fp8Convert, MidpointsRoundToEven) {
  for (unsigned code = 0; code < 0x7e; ++code) {
    const double lo = e4m3_value(code), hi = e4m3_value(code + 1);
    const auto mid = static_cast<float>((lo + hi) / 2);  // exact: a few significant bits
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    const unsigned even = (code & 1u) ? code + 1 : code;
    EXPECT_EQ(float_to_e4m3_bits(mid), even) << std::hex << code;
    EXPECT_EQ(float_to_e4m3_bits(-mid), even | 0x80u) << std::hex << code;
    EXPECT_EQ(float_to_e4m3_bits(std::nextafter(mid, INFINITY)), code + 1) << std::hex << code;
    EXPECT_EQ(float_to_e4m3_bits(std::nextafter(mid, 0.0f)), code) << std::hex << code;
    EXPECT_EQ(float_to_e4m3_bits(-std::nextafter(mid, INFINITY)), (code + 1) | 0x80u) << std::hex << code;
    EXPECT_EQ(float_to_e4m3_bits(-std::nextafter(mid, 0.0f)), code | 0x80u) << std::hex << code;
  }
  EXPECT_EQ(float_to_e4m3_bits(1.0625f), 0x38);  // between 1 (0x38) and 1.125 (0x39): to 1
  EXPECT_EQ(float_to_e4m3_bits(1.1875f), 0x3a);  // between 1.125 and 1.25 (0x3a): to 1.25
}

TEST(Fp8Convert, RandomValuesGoToTheNearestCode) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> exponent(-12.0, 9.5);
  std::uniform_real_distribution<float> uniform(-500.f, 500.f);
  for (int i = 0; i < 20000; ++i) {
    const float sign = (rng() & 1u) ? -1.f : 1.f;
    const float x = i % 2 ? uniform(rng) : sign * static_cast<float>(std::exp2(exponent(rng)));
    ASSERT_EQ(float_to_e4m3_bits(x), nearest_code(x)) << x;
  }
}

TEST(Fp8Convert, LargeValuesSaturate) {
  for (const float x : {448.0f, 449.0f, 463.99f, 464.0f, 479.0f, 480.0f, 1e6f, std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(float_to_e4m3_bits(x), 0x7e) << x;
    EXPECT_EQ(float_to_e4m3_bits(-x), 0xfe) << -x;
  }
  EXPECT_EQ(float_to_e4m3_bits(std::nextafter(448.0f, 0.0f)), 0x7e);  // nearest is 448 itself
  EXPECT_EQ(float_to_e4m3_bits(432.0f), 0x7e);  // the tie of 416 (0x7d) and 448 goes to the even 448
  EXPECT_EQ(float_to_e4m3_bits(431.0f), 0x7d);
}

TEST(Fp8Convert, TinyValuesGoToSignedZero) {
  const float half_min = 0x1p-10f;  // halfway to the smallest subnormal: the tie goes to 0 (even)
  for (const float x : {std::nextafter(half_min, 0.0f), half_min, 1e-6f, 1e-30f,
                        std::numeric_limits<float>::denorm_min()}) {
    EXPECT_EQ(float_to_e4m3_bits(x), 0x00) << x;
    EXPECT_EQ(float_to_e4m3_bits(-x), 0x80) << -x;
  }
  EXPECT_EQ(float_to_e4m3_bits(std::nextafter(half_min, 1.0f)), 0x01);
  EXPECT_EQ(float_to_e4m3_bits(-std::nextafter(half_min, 1.0f)), 0x81);
}

TEST(Fp8Convert, NanGivesANanCode) {
  EXPECT_TRUE(is_nan_code(float_to_e4m3_bits(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_nan_code(float_to_e4m3_bits(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_nan_code(float_to_e4m3_bits(std::numeric_limits<float>::signaling_NaN())));
}

}  // namespace
}  // namespace flexjit

// flexjit/half.hpp: the host's float -> bf16 / fp16 rounding (used to prepare GPU inputs and by
// the tests' oracle) is round-to-nearest-even, like the GPU's cvt.rn: every 16-bit value
// round-trips, midpoints go to the even neighbour, overflow gives inf, NaN stays NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "flexjit/half.hpp"

namespace flexjit {
namespace {

bool is_nan16(std::uint16_t h, int exp_bits) {
  const int mant_bits = 15 - exp_bits;
  const std::uint16_t exp_mask = static_cast<std::uint16_t>(((1u << exp_bits) - 1) << mant_bits);
  return (h & exp_mask) == exp_mask && (h & ((1u << mant_bits) - 1)) != 0;
}

TEST(HalfConvert, EveryFp16ValueRoundTrips) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if (is_nan16(bits, 5)) {
      EXPECT_TRUE(is_nan16(float_to_fp16_bits(fp16_bits_to_float(bits)), 5));
      continue;
    }
    ASSERT_EQ(float_to_fp16_bits(fp16_bits_to_float(bits)), bits) << std::hex << h;
  }
}

TEST(HalfConvert, EveryBf16ValueRoundTrips) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if (is_nan16(bits, 8)) {
      EXPECT_TRUE(is_nan16(float_to_bf16_bits(bf16_bits_to_float(bits)), 8));
      continue;
    }
    ASSERT_EQ(float_to_bf16_bits(bf16_bits_to_float(bits)), bits) << std::hex << h;
  }
}

// The exact midpoint between consecutive values goes to the one with an even last bit; just
// above it goes up.
TEST(HalfConvert, TiesToEven) {
  for (std::uint32_t h = 0; h < 0x7bff; ++h) {  // positive finite fp16, normal and subnormal
    const float lo = fp16_bits_to_float(static_cast<std::uint16_t>(h));
    const float hi = fp16_bits_to_float(static_cast<std::uint16_t>(h + 1));
    const float mid = lo + (hi - lo) / 2;  // exact in float
    const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : static_cast<std::uint16_t>(h);
    ASSERT_EQ(float_to_fp16_bits(mid), even) << std::hex << h;
    ASSERT_EQ(float_to_fp16_bits(std::nextafter(mid, INFINITY)), h + 1) << std::hex << h;
    ASSERT_EQ(float_to_fp16_bits(-mid), even | 0x8000) << std::hex << h;
  }
  for (std::uint32_t h = 0; h < 0x7f7f; h += 7) {
    const float lo = bf16_bits_to_float(static_cast<std::uint16_t>(h));
    const float hi = bf16_bits_to_float(static_cast<std::uint16_t>(h + 1));
    const float mid = lo + (hi - lo) / 2;
    const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : static_cast<std::uint16_t>(h);
    ASSERT_EQ(float_to_bf16_bits(mid), even) << std::hex << h;
  }
}

TEST(HalfConvert, OverflowAndSpecials) {
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7c00);  // the midpoint to "65536" rounds to inf
  EXPECT_EQ(float_to_fp16_bits(1e10f), 0x7c00);
  EXPECT_EQ(float_to_fp16_bits(-INFINITY), 0xfc00);
  EXPECT_EQ(float_to_bf16_bits(INFINITY), 0x7f80);
  EXPECT_EQ(float_to_fp16_bits(1e-10f), 0x0000);
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000);
  EXPECT_TRUE(is_nan16(float_to_fp16_bits(NAN), 5));
  EXPECT_TRUE(is_nan16(float_to_bf16_bits(NAN), 8));
}

}  // namespace
}  // namespace flexjit

// Host conversions between float and FP8 E4M3 (the OCP "e4m3fn" format of torch.float8_e4m3fn:
// 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, one NaN per sign, largest finite
// 448). float -> e4m3 rounds to nearest even and saturates finite values to +-448, as the GPU's
// cvt.rn.satfinite does, so host code knows exactly what a kernel reads; e4m3 -> float is exact.
#pragma once

#include <cmath>
#include <cstdint>

namespace flexjit {

inline constexpr float kFp8E4m3Max = 448.0f;

inline float e4m3_bits_to_float(std::uint8_t bits) {
  const float sign = (bits & 0x80u) ? -1.0f : 1.0f;
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return std::copysign(std::nanf(""), sign);  // NaN keeps its sign
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m * 2^-9
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);     // 1.m * 2^(e - 7)
}

inline std::uint8_t float_to_e4m3_bits(float value) {
  const std::uint8_t sign = std::signbit(value) ? 0x80u : 0x00u;
  if (std::isnan(value)) return static_cast<std::uint8_t>(sign | 0x7fu);
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude >= kFp8E4m3Max) return static_cast<std::uint8_t>(sign | 0x7eu);  // saturated (infinities too)
  // The spacing of e4m3 values around `magnitude`: 2^-9 below the smallest normal (2^-6), else
  // an eighth of the binade. nearbyint rounds ties to even under the default rounding mode, and a
  // carry into the next binade (or to 448) still lands on a value of the format.
  int binade = 0;
  std::frexp(magnitude, &binade);  // magnitude in [2^(binade - 1), 2^binade)
  const int quantum_exponent = (binade - 1 < -6 ? -6 : binade - 1) - 3;
  const double steps = std::nearbyint(std::ldexp(magnitude, -quantum_exponent));
  const double rounded = std::ldexp(steps, quantum_exponent);
  if (rounded < 0x1p-6) return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(steps));  // 0 .. 7 * 2^-9
  int e = 0;
  const double fraction = std::frexp(rounded, &e);  // rounded = fraction * 2^e, fraction in [0.5, 1)
  const int mantissa = static_cast<int>(fraction * 16.0) - 8;
  return static_cast<std::uint8_t>(sign | ((e - 1 + 7) << 3) | mantissa);
}

}  // namespace flexjit

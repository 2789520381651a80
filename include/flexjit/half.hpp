// Host conversions between float and the 16-bit element types: float -> bf16 / fp16 bit patterns
// with round-to-nearest-even, as the GPU's cvt.rn does, so host code can prepare inputs and know
// exactly what a kernel sees; and the exact reverse conversions, for reading outputs.
#pragma once

#include <bit>
#include <cstdint>

namespace flexjit {

inline std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);  // ties go to the even neighbour
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

inline std::uint16_t float_to_fp16_bits(float value) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  std::uint16_t out;
  if (u >= 0x47800000u) {  // >= 2^16 (or inf, NaN): inf, NaN stays NaN
    out = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (u < 0x38800000u) {  // below 2^-14: an fp16 subnormal (or zero)
    // Adding 0.5 aligns the value's bits so that the float adder's own round-to-nearest-even
    // rounds it at the fp16 subnormal's last place; the low mantissa bits are then the result.
    const float magic = std::bit_cast<float>(126u << 23);  // 0.5
    out = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(std::bit_cast<float>(u) + magic) - (126u << 23));
  } else {
    const std::uint32_t odd = (u >> 13) & 1u;
    u += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + odd;  // rebias and round; a carry may make inf
    out = static_cast<std::uint16_t>(u >> 13);
  }
  return static_cast<std::uint16_t>(out | sign);
}

inline float bf16_bits_to_float(std::uint16_t bits) { return std::bit_cast<float>(std::uint32_t(bits) << 16); }

inline float fp16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf / NaN
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

}  // namespace flexjit

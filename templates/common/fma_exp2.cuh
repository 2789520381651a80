// flexjit kernel templates: 2^x on the FMA and integer pipes instead of the special function unit,
// for a softmax that would otherwise wait on that unit (the FP8 forward, whose products are twice
// as fast as 16-bit ones: common/online_softmax.cuh, kFmaExpEvery).
//
// Compiled by NVRTC (no includes allowed there) and by the host compiler in tests, which check it
// against exp2 (tests/codegen/fma_exp2_test.cpp).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FJ_FMA_EXP2_FN __host__ __device__ __forceinline__
#else
#include <math.h>
#include <string.h>
#define FJ_FMA_EXP2_FN inline
#endif

namespace flexjit {
namespace fma_exp2_detail {

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ int bits(float x) { return __float_as_int(x); }
__device__ __forceinline__ float from_bits(int b) { return __int_as_float(b); }
#else
// The host build (tests) compiles without contraction, so these round as the device's do.
inline float add(float a, float b) { return a + b; }
inline float sub(float a, float b) { return a - b; }
inline float fma(float a, float b, float c) { return fmaf(a, b, c); }
inline int bits(float x) {
  int b;
  memcpy(&b, &x, sizeof b);
  return b;
}
inline float from_bits(int b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}
#endif

}  // namespace fma_exp2_detail

// x = j + f with j = round(x) and f in [-0.5, 0.5]; 2^f by a cubic (relative error under 7.5e-5),
// j added to its exponent bits. x below -125 (a masked -inf too) gives +0, as ex2 flushes such
// results; x up to 127 is exact in range (the softmax passes at most its rescale slack, 8).
FJ_FMA_EXP2_FN float fma_exp2(float x) {
  namespace d = fma_exp2_detail;
  const float shifter = 12582912.f;  // 1.5 * 2^23: x + shifter holds round(x) in its low mantissa bits
  const float clamped = x > -125.f ? x : -125.f;
  const float t = d::add(clamped, shifter);
  const float f = d::sub(clamped, d::sub(t, shifter));
  float p = d::fma(0.05517167f, f, 0.24261114f);
  p = d::fma(p, f, 0.69326099f);
  p = d::fma(p, f, 0.99992807f);
  const int j = d::bits(t) - d::bits(shifter);
  return x < -125.f ? 0.f : d::from_bits(d::bits(p) + j * (1 << 23));
}

}  // namespace flexjit

#undef FJ_FMA_EXP2_FN

// flexjit kernel templates: approximate float functions on the GPU's special function unit
// (inline PTX; NVRTC gets no math headers). The kernels use them for the softmax; generated mods
// use them when compiled with math = fast (codegen/float_math.cpp says which call which).
// ftz variants flush subnormal inputs and results to zero.
#pragma once

namespace flexjit {

// A function of one f32 that is one PTX instruction.
#define FJ_PTX_F32_FUNCTION(name, instruction)         \
  __device__ __forceinline__ float name(float x) {     \
    float r;                                           \
    asm(instruction " %0, %1;\n" : "=f"(r) : "f"(x)); \
    return r;                                          \
  }
FJ_PTX_F32_FUNCTION(fast_exp2, "ex2.approx.ftz.f32")  // 2^x, a few ulp; 2^-inf = +0 zeroes masked probabilities
FJ_PTX_F32_FUNCTION(fast_log2, "lg2.approx.ftz.f32")
FJ_PTX_F32_FUNCTION(fast_rcp, "rcp.approx.ftz.f32")
FJ_PTX_F32_FUNCTION(fast_tanh, "tanh.approx.f32")     // relative error about 2^-11 (sm_75 and newer)
#undef FJ_PTX_F32_FUNCTION

__device__ __forceinline__ float fast_exp(float x) { return fast_exp2(x * 1.44269504088896341f); }  // log2(e)
__device__ __forceinline__ float fast_log(float x) { return fast_log2(x) * 0.693147180559945309f; }  // ln(2)
// 1 / (1 + e^-x): e^-x = inf gives 0, as it should.
__device__ __forceinline__ float fast_sigmoid(float x) { return fast_rcp(1.0f + fast_exp(-x)); }

// 2^x on the FMA and integer pipes instead of the special function unit, for a softmax that
// would otherwise wait on that unit (the FP8 forward, whose products are twice as fast): x = j + f
// with j = round(x) and f in [-0.5, 0.5], 2^f by a cubic (relative error under 7.5e-5), j added to
// the exponent bits. x below -125 (a masked -inf too) gives +0, as ex2 would flush it.
__device__ __forceinline__ float fma_exp2(float x) {
  const float shifter = 12582912.f;  // 1.5 * 2^23: x + shifter holds round(x) in its low mantissa bits
  const float clamped = fmaxf(x, -125.f);
  const float t = __fadd_rn(clamped, shifter);
  const float f = __fsub_rn(clamped, __fsub_rn(t, shifter));
  float p = __fmaf_rn(0.05517167f, f, 0.24261114f);
  p = __fmaf_rn(p, f, 0.69326099f);
  p = __fmaf_rn(p, f, 0.99992807f);
  const int j = __float_as_int(t) - __float_as_int(shifter);
  return x < -125.f ? 0.f : __int_as_float(__float_as_int(p) + (j << 23));
}

}  // namespace flexjit

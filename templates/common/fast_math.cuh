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

}  // namespace flexjit

// flexjit kernel templates: the DSL's operations with the language's exact semantics
// (docs/language.md, ir/ir.hpp), for generated mask/score code.
//
// Compiled by NVRTC (no includes allowed there) and by the host compiler in tests, which
// check these functions against the reference interpreter on random values.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FJ_OPS_FN __host__ __device__ __forceinline__
#else
#include <math.h>  // the C float functions (expf, floorf, ...), as NVRTC provides them
#define FJ_OPS_FN inline
#endif

namespace flexjit {
namespace ops {

typedef long long i64;
typedef unsigned long long u64;

// Integers are 64-bit two's complement and wrap (unsigned arithmetic avoids C++'s UB).
FJ_OPS_FN i64 add(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
FJ_OPS_FN i64 sub(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
FJ_OPS_FN i64 mul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
FJ_OPS_FN i64 neg(i64 a) { return (i64)(0ull - (u64)a); }
FJ_OPS_FN i64 abs(i64 a) { return a < 0 ? neg(a) : a; }
FJ_OPS_FN i64 min(i64 a, i64 b) { return a < b ? a : b; }
FJ_OPS_FN i64 max(i64 a, i64 b) { return a < b ? b : a; }

// Python's floor division and modulo; x // 0 and x % 0 give 0 (no trap on the GPU).
FJ_OPS_FN i64 floordiv(i64 a, i64 b) {
  if (b == 0) return 0;
  if (b == -1) return neg(a);  // INT64_MIN // -1 wraps instead of trapping
  i64 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
FJ_OPS_FN i64 mod(i64 a, i64 b) {
  if (b == 0 || b == -1) return 0;
  i64 r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// Shift counts outside [0, 63] shift everything out; >> is arithmetic.
FJ_OPS_FN i64 shl(i64 a, i64 n) { return (n < 0 || n > 63) ? 0 : (i64)((u64)a << n); }
FJ_OPS_FN i64 shr(i64 a, i64 n) { return (n < 0 || n > 63) ? (a < 0 ? -1 : 0) : (a >> n); }
// Integer power with a non-negative exponent, wrapping.
FJ_OPS_FN i64 ipow(i64 base, i64 e) {
  u64 result = 1, b = (u64)base;
  while (e > 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return (i64)result;
}

// 32-bit versions, used only where the generator has proven that operands and result fit in 32
// bits (so nothing here can overflow); same Python semantics as the 64-bit ones.
FJ_OPS_FN int abs32(int a) { return a < 0 ? -a : a; }
FJ_OPS_FN int min32(int a, int b) { return a < b ? a : b; }
FJ_OPS_FN int max32(int a, int b) { return a < b ? b : a; }
// v clamped into [lo, hi]: a 64-bit comparison operand narrowed for a 32-bit one whose values lie
// in (lo, hi) (codegen/cuda_expr.cpp says why the comparison is unchanged).
FJ_OPS_FN int clamp32(i64 v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : static_cast<int>(v)); }
FJ_OPS_FN int floordiv32(int a, int b) {
  if (b == 0) return 0;
  int q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
FJ_OPS_FN int mod32(int a, int b) {
  if (b == 0 || b == -1) return 0;  // INT32_MIN % -1 is undefined in C++
  int r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Floats are IEEE fp32.
FJ_OPS_FN float floordiv(float a, float b) { return floorf(a / b); }
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Separate roundings, as in the interpreter: no fused multiply-subtract.
FJ_OPS_FN float mod(float a, float b) { return __fsub_rn(a, __fmul_rn(floorf(__fdiv_rn(a, b)), b)); }
#else
FJ_OPS_FN float mod(float a, float b) { return a - floorf(a / b) * b; }
#endif
FJ_OPS_FN float fmin(float a, float b) { return fminf(a, b); }
FJ_OPS_FN float fmax(float a, float b) { return fmaxf(a, b); }
FJ_OPS_FN float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
FJ_OPS_FN float rsqrt(float x) { return 1.0f / sqrtf(x); }
FJ_OPS_FN float fabs(float x) { return x < 0.0f ? -x : (x == 0.0f ? 0.0f : x); }

// sin, cos and tan: the C functions reduce |x| >= 105615 (kWideTrigArgument) in a long slow path
// that the kernels would copy for every element a thread holds in their unrolled loops (a score
// mod of sin and cos took 7 s to compile on the sm90 forward). The wide arguments go to one
// out-of-line copy; below the bound the inline C function is left with its short path only, since
// the compiler folds its own test of the same bound. Same bits as the C functions everywhere.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
constexpr float kWideTrigArgument = 105615.0f;
__device__ __noinline__ float sin_wide(float x) { return sinf(x); }
__device__ __noinline__ float cos_wide(float x) { return cosf(x); }
__device__ __noinline__ float tan_wide(float x) { return tanf(x); }
__device__ __forceinline__ float sin(float x) { return fabsf(x) >= kWideTrigArgument ? sin_wide(x) : sinf(x); }
__device__ __forceinline__ float cos(float x) { return fabsf(x) >= kWideTrigArgument ? cos_wide(x) : cosf(x); }
__device__ __forceinline__ float tan(float x) { return fabsf(x) >= kWideTrigArgument ? tan_wide(x) : tanf(x); }
#else
FJ_OPS_FN float sin(float x) { return sinf(x); }
FJ_OPS_FN float cos(float x) { return cosf(x); }
FJ_OPS_FN float tan(float x) { return tanf(x); }
#endif

// float -> int truncates toward zero; NaN and infinities give 0, finite values out of range
// saturate.
FJ_OPS_FN i64 to_int(float x) {
  if (x != x) return 0;
  if (x == 1.0f / 0.0f || x == -1.0f / 0.0f) return 0;
  if (x >= 9.2233720368547758e18f) return (i64)0x7fffffffffffffffll;
  if (x <= -9.2233720368547758e18f) return (i64)(-0x7fffffffffffffffll - 1);
  return (i64)x;
}
FJ_OPS_FN i64 floor_to_int(float x) { return to_int(floorf(x)); }
FJ_OPS_FN i64 ceil_to_int(float x) { return to_int(ceilf(x)); }
FJ_OPS_FN float to_float(i64 x) { return (float)x; }

}  // namespace ops
}  // namespace flexjit

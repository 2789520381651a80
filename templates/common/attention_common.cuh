// flexjit kernel templates: shared device helpers.
//
// This header is compiled by NVRTC at run time, so it includes nothing (no <cuda_bf16.h>, no std
// headers): element types are raw 16-bit storage and every conversion / special function is inline
// PTX. It must also build standalone with nvcc (tests/templates/ does exactly that).
#pragma once

#include "common/fast_math.cuh"
#include "common/kernel_args.cuh"

namespace flexjit {

typedef long long i64;

// ---------------------------------------------------------------------------------------------
// Element types. Storage is the raw bit pattern; the tag selects the mma variant and the
// conversions. Trivially copyable, so host code may alias them with its own bf16 / fp16 types.
// e4m3_t: FP8 E4M3 inputs of the Hopper forward, whose output (and every 16-bit conversion) is
// bf16, so kIsBf16 holds for it too.
struct bf16_t { unsigned short bits; };
struct fp16_t { unsigned short bits; };
struct e4m3_t { unsigned char bits; };

template <class E> struct ElementTraits;
template <> struct ElementTraits<bf16_t> {
  static constexpr bool kIsBf16 = true, kIsFp8 = false;
  static constexpr int kBytes = 2;
};
template <> struct ElementTraits<fp16_t> {
  static constexpr bool kIsBf16 = false, kIsFp8 = false;
  static constexpr int kBytes = 2;
};
template <> struct ElementTraits<e4m3_t> {
  static constexpr bool kIsBf16 = true, kIsFp8 = true;
  static constexpr int kBytes = 1;
};

// ---------------------------------------------------------------------------------------------
// Tile classes returned by Mods::classify for a (query tile, key tile) pair.
//   EMPTY:   every element is masked; the kernel never loads or visits the tile.
//   FULL:    every element is kept; mask() is not called (score() still is).
//   PARTIAL: mask() is evaluated per element.
enum TileClass : int { EMPTY = 0, FULL = 1, PARTIAL = 2 };

// Kernel arguments and kLog2e: common/kernel_args.cuh (shared with the host).

constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

// ---------------------------------------------------------------------------------------------
// Shared memory addresses and cp.async (sm_80+).
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy; when `pred` is false the source is not read (src-size 0) and the
// 16 destination bytes are zero-filled. .cg bypasses L1: K/V tiles are used once per CTA.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool pred) {
  const int src_bytes = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---------------------------------------------------------------------------------------------
// ldmatrix: four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, register i
// receives matrix i's fragment (row lane/4, columns 2*(lane%4) and +1; transposed with .trans).
__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2,
                                            unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2,
                                                  unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// ---------------------------------------------------------------------------------------------
// Tensor-core mma m16n8k16, fp32 accumulate in place: c += a * b.
// a: 4 regs (row-major 16x16), b: 2 regs (col-major 16x8), c: 4 floats (16x8).
template <bool kBf16>
__device__ __forceinline__ void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// ---------------------------------------------------------------------------------------------
// Conversions (round to nearest even). pack2: `lo` goes to the low 16 bits (lower column index).
template <bool kBf16>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
  if constexpr (kBf16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  }
  return r;
}
template <bool kBf16>
__device__ __forceinline__ unsigned short from_float(float x) {
  unsigned short r;
  if constexpr (kBf16) {
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
  } else {
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
  }
  return r;
}
template <bool kBf16>
__device__ __forceinline__ float to_float(unsigned short x) {
  float r;
  if constexpr (kBf16) {
    // bf16 is the upper half of an fp32.
    asm("mov.b32 %0, {0, %1};\n" : "=f"(r) : "h"(x));
  } else {
    asm("cvt.f32.f16 %0, %1;\n" : "=f"(r) : "h"(x));
  }
  return r;
}

__device__ __forceinline__ float fmax2(float a, float b) { return fmaxf(a, b); }

// ---------------------------------------------------------------------------------------------
// Warp shuffles. The mma C fragment spreads a row over the 4 lanes of a quad (lane % 4), so row
// reductions are two xor-shuffles.
__device__ __forceinline__ float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ __forceinline__ float quad_max(float v) {
  v = fmax2(v, shfl_xor(v, 1));
  return fmax2(v, shfl_xor(v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += shfl_xor(v, 1);
  return v + shfl_xor(v, 2);
}

// ---------------------------------------------------------------------------------------------
// 16-byte shared load / global store (output epilogue).
__device__ __forceinline__ void lds_128(unsigned addr, unsigned& a, unsigned& b, unsigned& c, unsigned& d) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr));
}
__device__ __forceinline__ void stg_128(void* ptr, unsigned a, unsigned b, unsigned c, unsigned d) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(ptr), "r"(a), "r"(b), "r"(c), "r"(d)
               : "memory");
}
__device__ __forceinline__ void sts_32(unsigned addr, unsigned v) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void sts_64(unsigned addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ void sts_128f(unsigned addr, const float (&v)[4]) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
               : "memory");
}
__device__ __forceinline__ void lds_128f(unsigned addr, float (&v)[4]) {
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3]) : "r"(addr)
               : "memory");
}

template <class T>
__device__ __forceinline__ T min2(T a, T b) { return a < b ? a : b; }
template <class T>
__device__ __forceinline__ T max2(T a, T b) { return a > b ? a : b; }

namespace detail {

// Accumulators to zero, before a product that starts from nothing.
template <int M, int N>
__device__ __forceinline__ void zero_fragments(float (&acc)[M][N][4]) {
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.f;
}
template <int N>
__device__ __forceinline__ void zero_fragments(float (&acc)[N][4]) {
  zero_fragments(reinterpret_cast<float(&)[1][N][4]>(acc));
}

}  // namespace detail

}  // namespace flexjit

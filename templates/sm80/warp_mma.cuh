// flexjit: one warp's m16n8k16 products, acc[m][n] += sum over k of A(k, m) B(k, n), shared by
// the sm80 forward, the backward and decode. Per k16 step the A fragments of every m16 tile come
// first, then per pair of n8 tiles one x4 ldmatrix of B feeds every m16 tile, so that each B
// fragment read from shared memory serves all the rows.
#pragma once

#include "common/attention_common.cuh"

namespace flexjit {

namespace detail {

// Operand fragments in a padded 16-bit array in shared memory, one x4 ldmatrix each. Fragment
// (k, i), k the k16 step and i the m16 tile of A (a 16x16 block) or the pair of n8 tiles of B
// (two 16x8 blocks: b0 b1 of tile 2i, then of tile 2i + 1), is the 16x16 block at rows 16 i,
// columns 8 col0 + 16 k of an array stored [mn][k] (Q and K in S = Q K^T), or with kTrans at rows
// 16 k, columns 8 col0 + 16 i of one stored [k][mn] (V in O += P V, dS^T as the A of dQ). `lane`
// is this lane's ldmatrix row address within a block (0 where `tile` has it added already).
template <bool kTrans>
struct SmemFragments {
  unsigned tile, lane;
  int row_bytes;
  int col0 = 0;
  __device__ __forceinline__ void load(int k, int i, unsigned (&r)[4]) const {
    const int row = kTrans ? k : i;
    const int col = kTrans ? i : k;
    const unsigned addr = tile + lane + row * 16 * row_bytes + (col0 + 2 * col) * 16;
    if constexpr (kTrans) {
      ldmatrix_x4_trans(addr, r[0], r[1], r[2], r[3]);
    } else {
      ldmatrix_x4(addr, r[0], r[1], r[2], r[3]);
    }
  }
};

// An A operand kept in registers (kInRegisters: a[k][m]) or read from shared memory: Q, which
// the kernels keep in registers or not by their configuration.
template <bool kInRegisters, class Regs, bool kTrans>
__device__ __forceinline__ const auto& regs_or_smem(const Regs& regs, const SmemFragments<kTrans>& smem) {
  if constexpr (kInRegisters) {
    return regs;
  } else {
    return smem;
  }
}

// acc[m][n] += A(m) B(n) over one k16 step, k: the A fragments a[m] of every m16 tile, B read
// from shared memory. An odd N takes its last n8 tile from an x4 load of its own and drops the
// load's other two matrices (they read the row padding or the next tiles' columns).
template <bool kBf16, int M, int N, bool kTransB>
__device__ __forceinline__ void warp_mma_step(float (&acc)[M][N][4], const unsigned (&a)[M][4],
                                              const SmemFragments<kTransB>& b_frag, int k) {
#pragma unroll
  for (int np = 0; np < N / 2; ++np) {
    unsigned b[4];
    b_frag.load(k, np, b);
#pragma unroll
    for (int m = 0; m < M; ++m) {
      mma_16816<kBf16>(acc[m][2 * np], a[m], b[0], b[1]);
      mma_16816<kBf16>(acc[m][2 * np + 1], a[m], b[2], b[3]);
    }
  }
  if constexpr (N % 2 == 1) {
    unsigned b[4];
    b_frag.load(k, N / 2, b);
#pragma unroll
    for (int m = 0; m < M; ++m) mma_16816<kBf16>(acc[m][N - 1], a[m], b[0], b[1]);
  }
}

// acc[m][n] += sum over the K k16 steps of A(k, m) B(k, n), A read from shared memory.
template <bool kBf16, int K, int M, int N, bool kTransA, bool kTransB>
__device__ __forceinline__ void warp_mma(float (&acc)[M][N][4], const SmemFragments<kTransA>& a_frag,
                                         const SmemFragments<kTransB>& b_frag) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    unsigned a[M][4];
#pragma unroll
    for (int m = 0; m < M; ++m) a_frag.load(k, m, a[m]);
    warp_mma_step<kBf16>(acc, a, b_frag, k);
  }
}
// The same with the A fragments in registers, a[k][m] (Q kept for the whole kernel; P and dS^T
// packed from the accumulators by pack_probabilities).
template <bool kBf16, int K, int M, int N, bool kTransB>
__device__ __forceinline__ void warp_mma(float (&acc)[M][N][4], const unsigned (&a)[K][M][4],
                                         const SmemFragments<kTransB>& b_frag) {
#pragma unroll
  for (int k = 0; k < K; ++k) warp_mma_step<kBf16>(acc, a[k], b_frag, k);
}
// One m16 tile (the backward's warps own 16 keys): acc[n] as acc[0][n].
template <bool kBf16, int K, int N, class A, bool kTransB>
__device__ __forceinline__ void warp_mma(float (&acc)[N][4], const A& a, const SmemFragments<kTransB>& b_frag) {
  warp_mma<kBf16, K>(reinterpret_cast<float(&)[1][N][4]>(acc), a, b_frag);
}

}  // namespace detail

}  // namespace flexjit

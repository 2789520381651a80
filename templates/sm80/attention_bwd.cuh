// flexjit: the backward pass for sm_80+ (mma.sync m16n8k16, cp.async, ldmatrix), in three kernels.
//
//   bwd_prep (per query row): delta_i = <dO_i, O_i>, lse2_i = lse_i * log2(e) (+inf for a row that
//     kept nothing, so that its P is 0), dq_accum_i = 0; and the learned sink's share of the
//     captured tensors' gradients, d sink_bh = -sum_i exp(sink_bh - lse_i) delta_i.
//   attention_bwd_sm80 (per block_n keys of one (batch, kv head)): every warp owns 16 keys and
//     keeps their dK and dV rows in registers. The CTA walks the query tiles that reach its keys
//     (Mods::q_range, classified by Mods::classify, or the query blocks whose list holds its kv
//     block) for every query head of its kv head, with `stages` tiles of Q, dO, lse2, delta in
//     flight. Per query tile, all in the transposed layout (rows = keys, columns = queries):
//       S^T = K Q^T -> P^T = exp2(logit2 - lse2)   (mask and score mods as in the forward)
//       dV += P^T dO;  dP^T = V dO^T;  dS^T = P^T (dP^T - delta)  (times d score_mod / d score)
//       dK += dS^T Q   (dS^T from registers, as P goes to the PV product in the forward)
//       dQ += dS K     (dS^T through shared memory: each warp has 16 keys, dQ needs all of them;
//                       fp32 atomics into dq_accum)
//     With captured-tensor gradients (kScatter) every kept pair also scatter-adds
//     dS * d score_mod / d tensor at the indices score_mod read (Mods::score_grads).
//   bwd_post (per query row): dq = scale * dq_accum in the element type.
// dK = scale * sum dS^T Q and dV are written once at the end; GQA sums over the group's heads in
// the same registers, so dK and dV need no atomics.
//
// The generator wraps the three as extern "C" kernels (codegen/sm80_bwd), launched with
//   prep, post: grid (Tq_pad / kBwdPassRows, Hq, B), kBwdPassThreads threads;
//   main: ceil(Tkv / block_n) * Hkv * B CTAs in the order of bwd_kv_tile, kThreads threads,
//   kSmemBytes of dynamic smem.
#pragma once

#include "common/attention_common.cuh"
#include "common/bwd_tile.cuh"
#include "common/mods_traits.cuh"
#include "common/online_softmax.cuh"
#include "common/tile_config.cuh"
#include "sm80/bwd_tiles.cuh"
#include "sm80/copy_tile.cuh"
#include "sm80/warp_mma.cuh"

namespace flexjit {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_, int kStages_, class Element_>
struct BwdConfig : WarpTileConfig<kHeadDim_, kBlockM_, kBlockN_, kWarps_, kStages_, Element_> {
  static constexpr int kSmemStride = sm80::bwd_smem_stride(kHeadDim_);
  static constexpr int kDsStride = sm80::bwd_ds_stride(kBlockM_);
  static constexpr int kSmemBytes = sm80::bwd_smem_bytes(kHeadDim_, kBlockM_, kBlockN_, kStages_);
  static_assert(sm80::bwd_tile_fits(sm80::BwdTile{kBlockM_, kBlockN_, kWarps_, kStages_}, kHeadDim_), "backward tile");
};

namespace detail {

__device__ __forceinline__ void cp_async_4(unsigned dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
namespace detail {
// Where a thread of the pre- or post-pass works: grid (row blocks, Hq, B), one warp per row.
struct BwdPassThread {
  int b, h, warp, lane;
  i64 bh;  // b * Hq + h
};
__device__ __forceinline__ BwdPassThread bwd_pass_thread(const BwdArgs& args) {
  const int b = blockIdx.z, h = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  return {b, h, warp, lane, static_cast<i64>(b) * args.Hq + h};
}
}  // namespace detail

// The pre-pass: one warp per row of (b, h), rows [blockIdx.x * kBwdPassRows, +kBwdPassRows) of
// Tq_pad. kScatter: the sink's gradient goes to the captured tensors it reads. kOrderedDq: every
// replica of dq_accum is zeroed (BwdArgs::dq_replicas).
template <class Mods, class Cfg, bool kScatter, bool kOrderedDq = false>
__device__ __forceinline__ void bwd_prep(const BwdArgs& args, const typename Mods::Params& p,
                                         const typename Mods::Grads& grads) {
  constexpr int D = Cfg::kHeadDim;            // of dq_accum
  constexpr int DV = value_head_dim<Cfg>(0);  // of O and dO
  constexpr bool kBf16 = Cfg::kIsBf16;
  const auto [b, h, warp, lane, bh] = detail::bwd_pass_thread(args);
  const unsigned short* gO = static_cast<const unsigned short*>(args.o) + b * args.o_b + h * args.o_h;
  const unsigned short* gdO = static_cast<const unsigned short*>(args.dout) + b * args.do_b + h * args.do_h;
  float sink = 0.f;
  if constexpr (kScatter && Mods::kHasSink) sink = Mods::sink(p, b, h);
  float dsink = 0.f;
  for (int r = warp; r < sm80::kBwdPassRows; r += sm80::kBwdPassWarps) {
    const int row = blockIdx.x * sm80::kBwdPassRows + r;
    float dot = 0.f;
    float lse = 0.f;
    if (row < args.Tq) {
      for (int d = lane * 2; d < DV; d += 64) {
        const unsigned o2 = *reinterpret_cast<const unsigned*>(gO + row * args.o_t + d);
        const unsigned g2 = *reinterpret_cast<const unsigned*>(gdO + row * args.do_t + d);
        dot += to_float<kBf16>(static_cast<unsigned short>(o2 & 0xffffu)) *
                   to_float<kBf16>(static_cast<unsigned short>(g2 & 0xffffu)) +
               to_float<kBf16>(static_cast<unsigned short>(o2 >> 16)) *
                   to_float<kBf16>(static_cast<unsigned short>(g2 >> 16));
      }
      dot = quad_sum(dot);
      dot += shfl_xor(dot, 4);
      dot += shfl_xor(dot, 8);
      dot += shfl_xor(dot, 16);
      lse = args.lse[bh * args.Tq + row];
    }
    if (row < args.Tq_pad) {
      const i64 at = bh * args.Tq_pad + row;
      if (lane == 0) {
        const bool live = row < args.Tq && lse != neg_inf();
        args.delta[at] = row < args.Tq ? dot : 0.f;
        args.lse2[at] = live ? lse * kLog2e : __int_as_float(0x7f800000);
        if (kScatter && Mods::kHasSink && live) dsink -= fast_exp2((sink - lse) * kLog2e) * dot;
      }
      for (int r = 0; r < (kOrderedDq ? args.dq_replicas : 1); ++r) {
        float* acc = args.dq_accum + r * args.dq_replica_floats + at * D;
        for (int d = lane * 4; d < D; d += 128) *reinterpret_cast<float4*>(acc + d) = make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
  }
  if constexpr (kScatter && Mods::kHasSink) {
    if (lane == 0 && dsink != 0.f) Mods::sink_grads(p, grads, dsink, b, h);
  }
}

// The post-pass: dq = scale * dq_accum, one warp per row, 8 elements per lane and step.
// kOrderedDq: dq_accum's replicas summed first, in replica order (the same bits every run).
template <class Mods, class Cfg, bool kOrderedDq = false>
__device__ __forceinline__ void bwd_post(const BwdArgs& args) {
  constexpr int D = Cfg::kHeadDim;
  constexpr bool kBf16 = Cfg::kIsBf16;
  const auto [b, h, warp, lane, bh] = detail::bwd_pass_thread(args);
  unsigned short* gdQ = static_cast<unsigned short*>(args.dq) + b * args.dq_b + h * args.dq_h;
  for (int r = warp; r < sm80::kBwdPassRows; r += sm80::kBwdPassWarps) {
    const int row = blockIdx.x * sm80::kBwdPassRows + r;
    if (row >= args.Tq) break;
    const float* acc = args.dq_accum + (bh * args.Tq_pad + row) * D;
    if constexpr (Cfg::kDqBlocked) {  // the row's query tile, in blocks (detail::DqBlockedLayout)
      constexpr int R = detail::DqBlockedLayout::kRows;
      acc = args.dq_accum + (bh * args.Tq_pad + row / R * R) * D;
    }
    for (int d = lane * 8; d < D; d += 256) {
      const float* at = acc + d;
      if constexpr (Cfg::kDqBlocked) at = acc + detail::DqBlockedLayout::index(row % detail::DqBlockedLayout::kRows, d);
      float4 a = *reinterpret_cast<const float4*>(at);
      float4 c = *reinterpret_cast<const float4*>(at + 4);
      if constexpr (kOrderedDq) {
        for (int r = 1; r < args.dq_replicas; ++r) {
          const float4 a2 = *reinterpret_cast<const float4*>(at + r * args.dq_replica_floats);
          const float4 c2 = *reinterpret_cast<const float4*>(at + r * args.dq_replica_floats + 4);
          a = make_float4(a.x + a2.x, a.y + a2.y, a.z + a2.z, a.w + a2.w);
          c = make_float4(c.x + c2.x, c.y + c2.y, c.z + c2.z, c.w + c2.w);
        }
      }
      const float s = args.scale;
      stg_128(gdQ + row * args.dq_t + d, pack2<kBf16>(a.x * s, a.y * s), pack2<kBf16>(a.z * s, a.w * s),
              pack2<kBf16>(c.x * s, c.y * s), pack2<kBf16>(c.z * s, c.w * s));
    }
  }
}

// ---------------------------------------------------------------------------------------------
template <class Mods, class Cfg, bool kScatter, bool kOrderedDq = false>
__device__ __forceinline__ void attention_bwd_sm80(const BwdArgs& args, const typename Mods::Params& p,
                                                   const typename Mods::Grads& grads) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int BN = Cfg::kBlockN;
  constexpr int BM = Cfg::kBlockM;
  constexpr int W = Cfg::kWarps;
  constexpr int S = Cfg::kStages;
  constexpr bool kBf16 = Cfg::kIsBf16;
  constexpr int kThreads = Cfg::kThreads;
  using Steps = detail::BwdSteps<D, BM>;
  constexpr int KD = Steps::KD, NQ = Steps::NQ, KQ = Steps::KQ, ND = Steps::ND;
  constexpr int MQ = BM / 16;  // dQ: m16 query tiles ...
  constexpr int WQ = W / MQ;   // ... times head-dim slices, one per warp
  constexpr int NDQ = ND / WQ; // n8 tiles of a slice
  constexpr int KN = BN / 16;  // k16 steps over the keys (dQ)
  constexpr int LDS = Cfg::kSmemStride;
  constexpr int kRowBytes = LDS * 2;
  constexpr int kDsRowBytes = Cfg::kDsStride * 2;
  // d score_mod / d score per element: only when it is not a constant (then it scales the result).
  constexpr bool kSlope = Mods::kHasScoreMod && !Mods::kScoreSlopeConstant;
  static_assert(sizeof(typename Cfg::Element) == 2, "16-bit elements only");

  extern __shared__ __align__(128) unsigned char flexjit_smem[];
  const unsigned sK = smem_u32(flexjit_smem);
  const unsigned sV = sK + BN * kRowBytes;
  const unsigned sStage0 = sV + BN * kRowBytes;  // stage s: Q, dO (BM rows each)
  constexpr unsigned kStageBytes = 2 * BM * kRowBytes;
  const unsigned sDS = sStage0 + S * kStageBytes;                      // dS^T [BN][BM + 8]
  const unsigned sRowStats = sDS + BN * kDsRowBytes;                   // stage s: lse2, delta (BM floats each)

  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int t = lane & 3;
  const detail::BwdKvTile tile = detail::bwd_kv_tile(args);
  const int n_block = tile.n_block, hk = tile.hk, b = tile.b;
  const int Tkv = args.Tkv;
  const int k0 = n_block * BN;
  const int k1 = min2(k0 + BN, Tkv);

  // ---- K and V of this CTA's keys.
  const unsigned short* gK =
      static_cast<const unsigned short*>(args.k) + static_cast<i64>(b) * args.k_b + static_cast<i64>(hk) * args.k_h;
  const unsigned short* gV =
      static_cast<const unsigned short*>(args.v) + static_cast<i64>(b) * args.v_b + static_cast<i64>(hk) * args.v_h;
  detail::copy_tile<BN, D, LDS, kThreads, true>(sK, gK + static_cast<i64>(k0) * args.k_t, args.k_t, Tkv - k0, tid);
  detail::copy_tile<BN, D, LDS, kThreads, true>(sV, gV + static_cast<i64>(k0) * args.v_t, args.v_t, Tkv - k0, tid);
  cp_async_commit();

  detail::QTileSchedule<Mods, BM, BN> sched(args, p, b, hk, k0, k1);
  // Issues the Q, dO, lse2 and delta copies of the next scheduled tile into `stage` as one commit
  // group (an empty one when nothing is left, so that the wait counts stay fixed).
  auto issue = [&](int stage, int& entry, int& head) {
    if (sched.has_tile()) {
      const int h = sched.head();
      const int q0 = sched.tile() * BM;
      const unsigned short* gq = static_cast<const unsigned short*>(args.q) + static_cast<i64>(b) * args.q_b +
                                 static_cast<i64>(h) * args.q_h + static_cast<i64>(q0) * args.q_t;
      const unsigned short* gdo = static_cast<const unsigned short*>(args.dout) + static_cast<i64>(b) * args.do_b +
                                  static_cast<i64>(h) * args.do_h + static_cast<i64>(q0) * args.do_t;
      const unsigned sq = sStage0 + stage * kStageBytes;
      detail::copy_tile<BM, D, LDS, kThreads, true>(sq, gq, args.q_t, args.Tq - q0, tid);
      detail::copy_tile<BM, D, LDS, kThreads, true>(sq + BM * kRowBytes, gdo, args.do_t, args.Tq - q0, tid);
      // lse2 and delta are padded to whole query tiles: no bounds.
      const i64 row = (static_cast<i64>(b) * args.Hq + h) * args.Tq_pad + q0;
      const unsigned ss = sRowStats + stage * 2 * BM * 4;
      for (int i = tid; i < 2 * BM; i += kThreads)
        detail::cp_async_4(ss + i * 4, i < BM ? args.lse2 + row + i : args.delta + row + (i - BM));
      entry = sched.tile() * 4 + sched.tile_class();
      head = h;
      sched.pop();
    } else {
      entry = -1;
    }
    cp_async_commit();
  };

  // The tiles in flight, oldest first: query tile * 4 + class (-1: none) and query head.
  int ring[S], ring_head[S];
#pragma unroll
  for (int s = 0; s < S; ++s) issue(s, ring[s], ring_head[s]);

  // Per-lane ldmatrix offsets (bytes), as in the forward:
  //   A operand, row-major 16x16 from [row][col] storage (K, V rows of this warp).
  const unsigned a_off = (warp * 16 + (lane & 15)) * kRowBytes + (lane >> 4) * 16;
  //   B operand from [n][k] storage (Q, dO for S^T and dP^T: n = query, k = d), two n8 tiles.
  const unsigned b_off = ((lane & 7) + ((lane >> 4) << 3)) * kRowBytes + ((lane >> 3) & 1) * 16;
  //   B operand from [k][n] storage with .trans (dO, Q for dV and dK; K for dQ), two n8 tiles.
  const unsigned bt_off = (lane & 15) * kRowBytes + (lane >> 4) * 16;
  //   A operand dS (m = query, k = key) from dS^T [key][query] storage with .trans.
  const unsigned ds_off = ((lane & 7) + ((lane >> 4) << 3)) * kDsRowBytes + ((lane >> 3) & 1) * 16;

  float dk[ND][4], dv[ND][4];
  detail::zero_fragments(dk);
  detail::zero_fragments(dv);

  const int key_row0 = k0 + warp * 16 + g;  // this thread's keys: key_row0, key_row0 + 8
  const bool kv_edge = k0 + BN > Tkv;
  int stage = 0;
#pragma unroll 1
  while (ring[0] >= 0) {
    const int cls = ring[0] & 3;
    const int h = ring_head[0];
    const int q0 = (ring[0] >> 2) * BM;
    cp_async_wait<S - 1>();  // this tile (and K, V) has landed for this thread ...
    __syncthreads();         // ... and for all; everybody is done with the last tile's buffers
    const unsigned sQ = sStage0 + stage * kStageBytes;
    const unsigned sdO = sQ + BM * kRowBytes;
    const unsigned sLse2 = sRowStats + stage * 2 * BM * 4;
    const unsigned sDelta = sLse2 + BM * 4;
    const typename detail::CtaOf<Mods>::type cta = detail::CtaOf<Mods>::make(p, b, h);

    // ---- S^T = K Q^T
    float sacc[NQ][4];
    detail::zero_fragments(sacc);
    detail::warp_mma<kBf16, KD>(sacc, detail::SmemFragments<false>{sK, a_off, kRowBytes},
                                detail::SmemFragments<false>{sQ, b_off, kRowBytes});

    // ---- P^T (and the slope, or the scores for the scatter), in the dP^T registers until dP^T.
    float dpacc[NQ][4];
    float xs[kScatter ? NQ : 1][4];
    const bool edge = kv_edge || q0 + BM > args.Tq;
    detail::tile_probabilities<Mods, kSlope && !kScatter, kScatter>(
        sacc, dpacc, xs, cta, args, b, h, key_row0, q0 + 2 * t, sLse2 + 2 * t * 4,
        cls, edge);

    // ---- dV += P^T dO
    {
      unsigned pa[KQ][1][4];
      detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), pa);
      detail::warp_mma<kBf16, KQ>(dv, pa, detail::SmemFragments<true>{sdO, bt_off, kRowBytes});
    }
    if constexpr (kSlope && !kScatter) {
#pragma unroll
      for (int nt = 0; nt < NQ; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) sacc[nt][e] *= dpacc[nt][e];
    }

    // ---- dP^T = V dO^T
    detail::zero_fragments(dpacc);
    detail::warp_mma<kBf16, KD>(dpacc, detail::SmemFragments<false>{sV, a_off, kRowBytes},
                                detail::SmemFragments<false>{sdO, b_off, kRowBytes});

    // ---- dS^T = P^T (dP^T - delta), times the slope: in sacc.
    detail::transposed_ds<Mods, kScatter, kSlope>(sacc, dpacc, xs, cta, grads, sDelta, b, h, key_row0, q0, t);

    // ---- dK += dS^T Q; dS^T to shared memory for dQ.
    {
      unsigned da[KQ][1][4];
      detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), da);
#pragma unroll
      for (int kq = 0; kq < KQ; ++kq) {
        const unsigned row = sDS + (warp * 16 + g) * kDsRowBytes + (kq * 16 + 2 * t) * 2;
        sts_32(row, da[kq][0][0]);
        sts_32(row + 8 * kDsRowBytes, da[kq][0][1]);
        sts_32(row + 16, da[kq][0][2]);
        sts_32(row + 8 * kDsRowBytes + 16, da[kq][0][3]);
      }
      detail::warp_mma<kBf16, KQ>(dk, da, detail::SmemFragments<true>{sQ, bt_off, kRowBytes});
    }

    __syncthreads();  // dS^T complete, and nobody reads this stage's Q, dO, lse2, delta any more:
    // the ring moves on and the stage takes the tile after those in flight, under the dQ product.
#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      ring[s] = ring[s + 1];
      ring_head[s] = ring_head[s + 1];
    }
    issue(stage, ring[S - 1], ring_head[S - 1]);

    // ---- dQ += dS K: warp (mi, dj) computes queries 16 mi .. +16 x head dims dj * D / WQ .. +D / WQ.
    {
      // Deterministic dQ (kOrderedDq, a kernel of its own so that the default one keeps its
      // registers): the kv tiles below this one that reach the query tile add first (waited for
      // before the product, where fewer registers are live).
      int* turns = nullptr;
      if constexpr (kOrderedDq) {
        using Turns = detail::DqTurns<Mods, BM, BN>;
        turns = Turns::counter(args, b, h, q0 / BM, n_block);
        if (warp == 0) {
          const int turn = Turns::turn(args, p, b, h, n_block, q0 / BM);
          if (lane == 0) Turns::wait(turns, turn);
        }
        __syncthreads();
      }
      const int mi = warp % MQ;
      const int dj = warp / MQ;
      float dq[NDQ][4];
      detail::zero_fragments(dq);
      // A: matrices (queries 0-7 | 8-15) x (keys 0-7 | 8-15) of dS, stored transposed, from column
      // 16 mi on; B: K's columns of this warp's slice (an odd number of n8 tiles for some tiles).
      const detail::SmemFragments<true> ds_frag{sDS, ds_off, kDsRowBytes, 2 * mi};
      const detail::SmemFragments<true> k_frag{sK, bt_off, kRowBytes, dj * NDQ};
      detail::warp_mma<kBf16, KN>(dq, ds_frag, k_frag);
      float* acc = (kOrderedDq ? detail::DqTurns<Mods, BM, BN>::accum(args, n_block) : args.dq_accum) +
                   ((static_cast<i64>(b) * args.Hq + h) * args.Tq_pad + q0 + mi * 16 + g) * D + dj * NDQ * 8 + 2 * t;
#pragma unroll
      for (int nd = 0; nd < NDQ; ++nd) {
        detail::red_add_2(acc + nd * 8, dq[nd][0], dq[nd][1]);
        detail::red_add_2(acc + 8 * D + nd * 8, dq[nd][2], dq[nd][3]);
      }
      if constexpr (kOrderedDq) {
        __threadfence();  // every add of this CTA lands before the next kv tile's turn
        __syncthreads();
        if (tid == 0) detail::DqTurns<Mods, BM, BN>::pass(turns);
      }
    }
    stage = stage + 1 == S ? 0 : stage + 1;
  }

  // ---- epilogue: dK = scale * acc, dV, in the element type (rows past Tkv are not written).
  detail::store_dk_dv<kBf16>(args, dk, dv, b, hk, key_row0, t);
}

}  // namespace flexjit

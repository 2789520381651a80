// flexjit: the Hopper backward's main kernel for a value head dim of its own (multi-head latent
// attention: q and k of D = 192, v, out and dout of Dv = 128). Beside 64 keys, dK (D columns) and
// dV (Dv columns) together take 160 registers a thread, more than one warpgroup has beside its
// products; so the two consumer warpgroups share the CTA's 64 keys and split the gradients
// instead: warpgroup 0 keeps dV, warpgroup 1 dK. Each product over a head dim is made once, by one
// warpgroup, and what the other needs of it crosses through shared memory:
//
//   warpgroup 0 (scores, dV)                    warpgroup 1 (dP, dK)
//   S^T = K Q^T  (k = D)                        dP^T = V dO^T  (k = Dv)
//   P^T = exp2(logit2 - lse2), the mods         dP^T -> shared memory (fp32)      --> 0
//   dS^T = P^T (dP^T - delta) (the slope, the capture gradients)
//   dS^T -> shared memory (16-bit)       --> 1
//   dV += P^T dO  (P^T registers, N = Dv)       dK += dS^T Q  (dS^T shared, N = D)
//   dQ += dS K: the D / 64 column blocks dealt between the two, alternately per query tile
//
// dS^T goes out before dV's product is issued, so that warpgroup 1's dK starts as early as it
// can. One dS^T and one dP^T buffer suffice: warpgroup 0 rewrites dS^T only after dP^T of the next
// tile, which warpgroup 1 makes after every read of this tile's dS^T; warpgroup 1 rewrites dP^T
// only after dS^T of this tile, which warpgroup 0 makes after reading dP^T.
//
// The producer, the query-tile ring (detail::QTileRing), the per-pair arithmetic
// (common/bwd_tile.cuh), the blocked dq_accum, its bulk adds and the ordered dQ's turns are those of
// the narrow kernel (sm90/attention_bwd.cuh). Each stage of the ring holds Q, dO, lse2 and delta of
// a query tile (sm90::BwdSplitSmemLayout), free once both warpgroups have made their first dQ block.
//
// Launched like the narrow kernel: ceil(Tkv / block_n) * Hkv * B CTAs in the order of
// bwd_kv_tile, Cfg::kThreads threads, Cfg::kSmemBytes of dynamic shared memory.
#pragma once

#include "sm90/attention_bwd.cuh"

namespace flexjit {

template <int kHeadDim_, int kHeadDimV_, int kBlockM_, int kBlockN_, int kStages_, class Element_>
struct Sm90BwdSplitConfig : TileConfigBase<kHeadDim_, kBlockM_, kBlockN_, kStages_, Element_> {
  static constexpr int kHeadDimV = kHeadDimV_;  // of v, out and dout
  static constexpr int kConsumers = 2;          // warpgroup 0 keeps dV, warpgroup 1 dK
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kSmemBytes =
      sm90::bwd_split_smem_bytes(kHeadDim_, kHeadDimV_, kBlockM_, kBlockN_, kStages_);
  static_assert(kSmemBytes <= sm90::kSmemPerCtaBytes, "the split backward's shared memory");
  static constexpr int kProducerRegisters = sm90::kBwdProducerRegisters;
  static constexpr int kConsumerRegisters = sm90::consumer_registers(kConsumers, kProducerRegisters, 1);
  static constexpr bool kDqBlocked = true;
};

namespace detail {
// The named barriers between the two consumer warpgroups (1 and 2 are each warpgroup's own):
// one warpgroup arrives, the other syncs, 256 threads in all.
enum SplitBarrier : int {
  kSplitDpReady = 3,  // dP^T is in shared memory (1 -> 0)
  kSplitDsReady = 4,  // dS^T is in shared memory (0 -> 1)
};

// acc += A B over a tile's BM queries, A = 64 keys x queries (P^T from packed registers, or dS^T
// from shared memory in store_key_rows' layout), B = N columns of dO or Q (N-major, 64-column
// blocks of BM rows from `cols`). Issued and committed, not waited for.
template <bool kBf16, int N, int BM, int KQ>
__device__ __forceinline__ void key_product_from_registers(float (&acc)[N / 8][4], const unsigned (&a)[KQ][1][4],
                                                           unsigned cols) {
  sm90::wgmma_fence();
#pragma unroll
  for (int kq = 0; kq < KQ; ++kq)
    sm90::Wgmma<N>::template rs<kBf16>(
        acc, a[kq][0], sm90::smem_descriptor(cols + kq * 16 * sm90::kSwizzleBytes, BM * sm90::kSwizzleBytes, 1024), 1);
  sm90::wgmma_commit();
}
template <bool kBf16, int N, int BM>
__device__ __forceinline__ void key_product_from_shared(float (&acc)[N / 8][4], unsigned a, unsigned cols) {
  sm90::wgmma_fence();
#pragma unroll
  for (int kq = 0; kq < BM / 16; ++kq)
    sm90::Wgmma<N>::template ss_kn<kBf16>(
        acc, sm90::smem_descriptor(a + kq * 32, 16, 1024),
        sm90::smem_descriptor(cols + kq * 16 * sm90::kSwizzleBytes, BM * sm90::kSwizzleBytes, 1024), 1);
  sm90::wgmma_commit();
}
}  // namespace detail

template <class Mods, class Cfg, bool kScatter, bool kOrderedDq = false>
__device__ __forceinline__ void attention_bwd_sm90_split(const BwdArgs& args, const typename Mods::Params& p,
                                                         const typename Mods::Grads& grads, const BwdTmaMaps& maps) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int DV = Cfg::kHeadDimV;
  constexpr int BM = Cfg::kBlockM;
  constexpr int BN = Cfg::kBlockN;
  constexpr int S = Cfg::kStages;
  constexpr bool kBf16 = Cfg::kIsBf16;
  constexpr int CB = D / 64;  // dQ's 64-column blocks
  using Steps = detail::BwdSteps<D, BM>;
  constexpr int NQ = Steps::NQ, KQ = Steps::KQ;
  constexpr bool kSlope = Mods::kHasScoreMod && !Mods::kScoreSlopeConstant;
  constexpr int kPair = 2 * 128;  // threads of a barrier between the two warpgroups
  static_assert(BM == 64 && BN == 64, "64 keys (the M of every transposed product) against 64 queries");
  static_assert(D % 64 == 0 && DV % 64 == 0 && D <= 256 && DV <= 256, "whole 64-column blocks, one wgmma wide");
  static_assert(CB >= 2, "each warpgroup makes at least one dQ block per tile");
  static_assert(sizeof(typename Cfg::Element) == 2, "16-bit elements only");

  extern __shared__ __align__(1024) unsigned char flexjit_smem[];
  const unsigned smem0 = (smem_u32(flexjit_smem) + sm90::kTileAlign - 1) & ~unsigned(sm90::kTileAlign - 1);
  constexpr sm90::BwdSplitSmemLayout kSmem(D, DV, BM, BN, S);
  const unsigned sK = smem0 + kSmem.k(), sV = smem0 + kSmem.v();
  const unsigned sDS = smem0 + kSmem.ds(), sDP = smem0 + kSmem.dp();
  const unsigned kv_full = smem0 + kSmem.kv_full();
  auto q_full = [&](int s) { return smem0 + kSmem.q_full(s); };
  auto q_empty = [&](int s) { return smem0 + kSmem.q_empty(s); };

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  // Plain names, not structured bindings: the lambdas below capture them (C++17).
  const detail::BwdCtaKeys keys = detail::bwd_cta_keys<BN>(args);
  const int n_block = keys.n_block, hk = keys.hk, b = keys.b, k0 = keys.k0, k1 = keys.k1;

  if (tid == 0) {
    detail::init_q_ring<S, Cfg::kConsumers>(kv_full, q_full, q_empty);
    sm90::mbarrier_init_fence();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    sm90::registers_release<Cfg::kProducerRegisters>();
    if (tid != 0) return;
    detail::load_kv_once<D, BN, DV>(sK, sV, maps, kv_full, k0, hk, b);
    detail::produce_q_tiles<Mods, BM, BN, S, kOrderedDq>(args, p, b, hk, k0, k1, q_empty, [&](int, int s, int b, int h, int q0) {
      detail::load_q_slot<D, DV, BM>(kSmem, smem0, s, q_full, maps, args, b, h, q0);
    });
    return;
  }

  // ------------------------------------------------------------------ consumers
  sm90::registers_claim<Cfg::kConsumerRegisters>();
  const detail::ConsumerThread me = detail::consumer_thread(tid, warpgroup);
  const int w = me.w, lane = me.lane, warp_in_group = me.warp_in_group, g = me.g, t = me.t;
  const int key_row0 = k0 + warp_in_group * 16 + g;  // this thread's keys: key_row0, key_row0 + 8
  const bool dq_leader = (tid & 127) == 0;  // issues and waits for the warpgroup's bulk dQ adds
  const bool kv_edge = k0 + BN > args.Tkv;
  // This thread's dP^T accumulators in shared memory, in place: 16 bytes per n8 tile and thread.
  const unsigned sDPt = sDP + (warp_in_group * NQ * 32 + lane) * 16;
  using Turns = detail::DqTurns<Mods, BM, BN>;
  sm90::mbarrier_wait(kv_full, 0);

  // ---- dQ += dS K for the warpgroup's share of the column blocks of tile i (the blocks of w's
  // parity on even tiles, the others on odd ones: D = 192 gives 2 and 1 in turn), 64 queries x 64
  // columns at a time (A = dS^T M-major, B = K N-major), staged in the warpgroup's buffer and added
  // to the query tile's span of dq_accum. The first block's wait also waits for this tile's dV or
  // dK product, after which the warpgroup is done with the stage.
  // Deterministic dQ (kOrderedDq): the kv tiles below this one that reach the query tile add
  // first; the two warpgroups add disjoint columns, so they wait for the same count. The previous
  // tile's adds have had this tile's products to land: their turn passes now.
  auto add_dq = [&](const auto& ring, int*& pending) {
    const int i = ring.i, s = ring.slot(), h = ring.head(), q0 = ring.q0();
    float* dq_tile = (kOrderedDq ? Turns::accum(args, n_block) : args.dq_accum) +
                     ((static_cast<i64>(b) * args.Hq + h) * args.Tq_pad + q0) * D;
    int* turns = kOrderedDq ? Turns::counter(args, b, h, q0 / BM, n_block) : nullptr;
    if constexpr (kOrderedDq) detail::pass_dq_turn<Turns>(pending, dq_leader);
    const unsigned staging = smem0 + kSmem.dq(w);
    // The warp's first query row, opaque to the compiler (as in the wide kernel: the swizzled
    // staging addresses are then computed per tile, not held in registers through the mods).
    int warp_row = warp_in_group * 16 + g;
    asm volatile("" : "+r"(warp_row));
    const detail::DqBlockThread me{args, b, h, n_block, q0 / BM, w, lane, warp_in_group, t, warp_row, dq_leader};
    const int first = (i + w) & 1;
#pragma unroll
    for (int c = 0; c < (CB + 1) / 2 && first + 2 * c < CB; ++c)
      detail::add_dq_column_block<kBf16, BN, Cfg::kConsumers, kOrderedDq, Turns>(me, p, first + 2 * c, c == 0, sDS, sK,
                                                                               staging, q_empty(s), turns, dq_tile);
    pending = turns;
  };
  // After the last tile: its turn, and shared memory stays the CTA's until the last bulk add has
  // read it.
  auto finish_dq = [&](int* pending) {
    if constexpr (kOrderedDq) detail::pass_dq_turn<Turns>(pending, dq_leader);
    if (dq_leader) sm90::bulk_wait<0>();
  };

  int* pending = nullptr;  // ordered: the counter of the tile whose adds have not passed their turn
  if (w == 0) {
    float dv[DV / 8][4];
    detail::zero_fragments(dv);
#pragma unroll 1
    for (detail::QTileRing<Mods, BM, BN, S, kOrderedDq> ring(args, p, b, hk, k0, k1); ring.has_tile(); ring.next()) {
      const int s = ring.slot(), h = ring.head(), q0 = ring.q0(), cls = ring.tile_class();
      const unsigned sQ = smem0 + kSmem.q(s);
      const typename detail::CtaOf<Mods>::type cta = detail::CtaOf<Mods>::make(p, b, h);
      sm90::mbarrier_wait(q_full(s), ring.parity());

      // ---- S^T = K Q^T, then P^T (and the slope, or the scores for the scatter).
      float sacc[NQ][4];
      detail::transposed_product<kBf16, D, BM, BN>(sacc, sK, sQ);
      sm90::wgmma_wait<0>();
      float dpacc[NQ][4];  // the slope until dP^T arrives
      float xs[kScatter ? NQ : 1][4];
      const bool edge = kv_edge || q0 + BM > args.Tq;
      detail::tile_probabilities<Mods, kSlope && !kScatter, kScatter>(
          sacc, dpacc, xs, cta, args, b, h, key_row0, q0 + 2 * t, smem0 + kSmem.lse2(s) + 2 * t * 4, cls, edge);
      unsigned pa[KQ][1][4];  // P^T for dV's product
      detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), pa);
      if constexpr (kSlope && !kScatter) {
#pragma unroll
        for (int nt = 0; nt < NQ; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) sacc[nt][e] *= dpacc[nt][e];
      }

      // ---- dP^T from warpgroup 1; dS^T = P^T (dP^T - delta), times the slope, to shared memory.
      sm90::named_barrier_sync(detail::kSplitDpReady, kPair);
#pragma unroll
      for (int nt = 0; nt < NQ; ++nt) lds_128f(sDPt + nt * 32 * 16, dpacc[nt]);
      detail::transposed_ds<Mods, kScatter, kSlope>(sacc, dpacc, xs, cta, grads, smem0 + kSmem.delta(s), b, h, key_row0,
                                                    q0, t);
      unsigned da[KQ][1][4];
      detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), da);
      detail::store_key_rows(sDS, da, warp_in_group, g, t);
      sm90::fence_async_shared();
      sm90::named_barrier_arrive(detail::kSplitDsReady, kPair);

      // ---- dV += P^T dO; dS^T of every warp is in shared memory once the warpgroup syncs in
      // add_dq (its own dQ blocks read all 64 keys).
      detail::key_product_from_registers<kBf16, DV, BM>(dv, pa, smem0 + kSmem.dout(s));
      sm90::named_barrier_sync(1 + w, 128);
      add_dq(ring, pending);
    }
    finish_dq(pending);
    // ---- epilogue: dV (rows past Tkv are not written).
    detail::store_key_gradient<kBf16>(args.dv, args.dv_b, args.dv_h, args.dv_t, dv, 1.f, args.Tkv, b, hk, key_row0, t);
  } else {
    float dk[D / 8][4];
    detail::zero_fragments(dk);
#pragma unroll 1
    for (detail::QTileRing<Mods, BM, BN, S, kOrderedDq> ring(args, p, b, hk, k0, k1); ring.has_tile(); ring.next()) {
      const int s = ring.slot();
      sm90::mbarrier_wait(q_full(s), ring.parity());

      // ---- dP^T = V dO^T, to shared memory for warpgroup 0 (which read the previous tile's
      // before its dS^T, that this warpgroup waited for).
      float dpacc[NQ][4];
      detail::transposed_product<kBf16, DV, BM, BN>(dpacc, sV, smem0 + kSmem.dout(s));
      sm90::wgmma_wait<0>();
#pragma unroll
      for (int nt = 0; nt < NQ; ++nt) sts_128f(sDPt + nt * 32 * 16, dpacc[nt]);
      sm90::named_barrier_arrive(detail::kSplitDpReady, kPair);

      // ---- dK += dS^T Q.
      sm90::named_barrier_sync(detail::kSplitDsReady, kPair);
      detail::key_product_from_shared<kBf16, D, BM>(dk, sDS, smem0 + kSmem.q(s));
      add_dq(ring, pending);
    }
    finish_dq(pending);
    // ---- epilogue: dK = scale * acc (rows past Tkv are not written).
    detail::store_key_gradient<kBf16>(args.dk, args.dk_b, args.dk_h, args.dk_t, dk, args.scale, args.Tkv, b, hk,
                                      key_row0, t);
  }
}

}  // namespace flexjit

// flexjit: the Hopper backward's main kernel for head dims whose dK and dV do not fit one
// warpgroup's registers beside its products (D = 256: 64 keys x 256 columns of each is 128
// registers a thread). The two consumer warpgroups share the CTA's 64 keys and split the head dim
// instead of the keys: warpgroup w keeps dK and dV of columns w D/2 .. + D/2 and adds dQ's columns
// of the same half. Each product over the whole head dim is made once, by one warpgroup, and its
// result passed to the other through shared memory:
//
//   warpgroup 0 (scores)                        warpgroup 1 (dP)
//   S^T = K Q^T  (k = D)                        dP^T = V dO^T  (k = D)
//   P^T = exp2(logit2 - lse2), the mods         dP^T -> shared memory (fp32)      --> 0
//   P^T -> shared memory (16-bit)        --> 1
//   dV[:, lo] += P^T dO[:, lo]  (P^T regs)      dV[:, hi] += P^T dO[:, hi]  (P^T shared)
//   dS^T = P^T (dP^T - delta) (the slope, the capture gradients)
//   dS^T -> shared memory (16-bit)       --> 1
//   dK[:, lo] += dS^T Q[:, lo]  (dS^T regs)     dK[:, hi] += dS^T Q[:, hi]  (dS^T shared)
//   dQ[:, lo] += dS K[:, lo]                    dQ[:, hi] += dS K[:, hi]
//
// The producer warp, the query-tile schedule (detail::QTileSchedule), the per-pair arithmetic
// (common/bwd_tile.cuh), the blocked dq_accum and its bulk adds are those of the narrow kernel
// (sm90/attention_bwd.cuh). Q is double-buffered; dO has one slot, freed once both dV products
// have read it, so the next tile's dO loads under this tile's dK and dQ products (shared memory
// holds no second dO at D = 256: sm90::BwdWideSmemLayout).
//
// Launched like the narrow kernel: ceil(Tkv / block_n) * Hkv * B CTAs in the order of
// bwd_kv_tile, Cfg::kThreads threads, Cfg::kSmemBytes of dynamic shared memory.
#pragma once

#include "sm90/attention_bwd.cuh"

namespace flexjit {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kStages_, class Element_>
struct Sm90BwdWideConfig : TileConfigBase<kHeadDim_, kBlockM_, kBlockN_, kStages_, Element_> {
  static constexpr int kConsumers = 2;  // one per half of the head dim
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kSmemBytes = sm90::bwd_wide_smem_bytes(kHeadDim_, kBlockM_, kBlockN_, kStages_);
  static_assert(kSmemBytes <= sm90::kSmemPerCtaBytes, "the wide backward's shared memory");
  static constexpr int kProducerRegisters = sm90::kBwdProducerRegisters;
  static constexpr int kConsumerRegisters = sm90::consumer_registers(kConsumers, kProducerRegisters, 1);
  static constexpr bool kDqBlocked = true;
};

namespace detail {
// The named barriers between the two consumer warpgroups (1 and 2 are each warpgroup's own):
// one warpgroup arrives, the other syncs, 256 threads in all.
enum WideBarrier : int {
  kPReady = 3,     // P^T is in shared memory (0 -> 1)
  kDpReady = 4,    // dP^T is in shared memory (1 -> 0)
  kDsReady = 5,    // dS^T is in shared memory (0 -> 1)
  kTileRead = 6,   // warpgroup 1 has read the previous tile's P^T and dS^T (1 -> 0)
};
}  // namespace detail

template <class Mods, class Cfg, bool kScatter, bool kOrderedDq = false>
__device__ __forceinline__ void attention_bwd_sm90_wide(const BwdArgs& args, const typename Mods::Params& p,
                                                        const typename Mods::Grads& grads, const BwdTmaMaps& maps) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int BM = Cfg::kBlockM;
  constexpr int BN = Cfg::kBlockN;
  constexpr int S = Cfg::kStages;
  constexpr bool kBf16 = Cfg::kIsBf16;
  constexpr int DH = D / 2;          // head-dim columns of dK, dV and dQ per warpgroup
  constexpr int CB = DH / 64;        // ... in 64-column blocks
  using Steps = detail::BwdSteps<D, BM>;
  constexpr int NQ = Steps::NQ, KQ = Steps::KQ;
  constexpr int NH = DH / 8;         // n8 tiles of a warpgroup's half
  constexpr unsigned kRow = sm90::kSwizzleBytes;
  constexpr bool kSlope = Mods::kHasScoreMod && !Mods::kScoreSlopeConstant;
  constexpr int kPair = 2 * 128;     // threads of a barrier between the two warpgroups
  static_assert(BM == 64 && BN == 64, "64 keys (the M of every transposed product) against 64 queries");
  static_assert(D % 128 == 0 && D <= 256, "two halves of whole 64-column blocks");
  static_assert(sizeof(typename Cfg::Element) == 2, "16-bit elements only");

  extern __shared__ __align__(1024) unsigned char flexjit_smem[];
  const unsigned smem0 = (smem_u32(flexjit_smem) + sm90::kTileAlign - 1) & ~unsigned(sm90::kTileAlign - 1);
  constexpr sm90::BwdWideSmemLayout kSmem(D, BM, BN, S);
  const unsigned sK = smem0 + kSmem.k(), sV = smem0 + kSmem.v();
  const unsigned sdO = smem0 + kSmem.dout();
  const unsigned sP = smem0 + kSmem.p(), sDS = smem0 + kSmem.ds(), sDP = smem0 + kSmem.dp();
  const unsigned kv_full = smem0 + kSmem.kv_full();
  const unsigned do_full = smem0 + kSmem.do_full(), do_empty = smem0 + kSmem.do_empty();
  auto q_full = [&](int s) { return smem0 + kSmem.q_full(s); };
  auto q_empty = [&](int s) { return smem0 + kSmem.q_empty(s); };

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const auto [n_block, hk, b, k0, k1] = detail::bwd_cta_keys<BN>(args);
  const int Tkv = args.Tkv;

  if (tid == 0) {
    detail::init_q_ring<S, Cfg::kConsumers>(kv_full, q_full, q_empty);
    sm90::mbarrier_init(do_full, 1);
    sm90::mbarrier_init(do_empty, Cfg::kConsumers * 4);
    sm90::mbarrier_init_fence();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    sm90::registers_release<Cfg::kProducerRegisters>();
    if (tid != 0) return;
    detail::load_kv_once<D, BN>(sK, sV, maps, kv_full, k0, hk, b);
    detail::produce_q_tiles<Mods, BM, BN, S, kOrderedDq>(args, p, b, hk, k0, k1, q_empty, [&](int i, int s, int b, int h, int q0) {
      const unsigned sQ = smem0 + kSmem.q(s);
      sm90::mbarrier_arrive_expect_tx(q_full(s), BM * D * 2 + 2 * BM * 4);
#pragma unroll
      for (int cb = 0; cb < D / 64; ++cb) sm90::tma_load_4d(sQ + cb * BM * kRow, &maps.q, q_full(s), cb * 64, q0, h, b);
      detail::load_row_stats<BM>(smem0 + kSmem.lse2(s), smem0 + kSmem.delta(s), args, b, h, q0, q_full(s));
      if (i >= 1) sm90::mbarrier_wait(do_empty, (i - 1) & 1);
      sm90::mbarrier_arrive_expect_tx(do_full, BM * D * 2);
#pragma unroll
      for (int cb = 0; cb < D / 64; ++cb)
        sm90::tma_load_4d(sdO + cb * BM * kRow, &maps.dout, do_full, cb * 64, q0, h, b);
    });
    return;
  }

  // ------------------------------------------------------------------ consumers
  sm90::registers_claim<Cfg::kConsumerRegisters>();
  // w = 0: the scores, w = 1: dP; and the half of the head dim.
  const auto [w, lane, warp_in_group, g, t] = detail::consumer_thread(tid, warpgroup);
  const int key_row0 = k0 + warp_in_group * 16 + g;  // this thread's keys: key_row0, key_row0 + 8
  const bool dq_leader = (tid & 127) == 0;  // issues and waits for the warpgroup's bulk dQ adds
  const bool kv_edge = k0 + BN > Tkv;
  // This thread's dP^T accumulators in shared memory, in place: 16 bytes per n8 tile and thread.
  const unsigned sDPt = sDP + (warp_in_group * NQ * 32 + lane) * 16;

  // acc += A B over the tile's queries: A the 64 keys x queries (P^T or dS^T) from this thread's
  // packed registers, or from shared memory; B this warpgroup's half of dO or Q (N-major). Issued
  // and committed, not waited for.
  const unsigned half_columns = w * CB * BM * kRow;  // the half's first 64-column block of Q or dO
  auto b_descriptor = [&](unsigned cols, int kq) {  // the half's rows kq * 16 .. + 16, N-major
    return sm90::smem_descriptor(cols + half_columns + kq * 16 * kRow, BM * kRow, 1024);
  };
  auto half_product_from_registers = [&](float(&acc)[NH][4], const unsigned(&a)[KQ][1][4], unsigned cols) {
    sm90::wgmma_fence();
#pragma unroll
    for (int kq = 0; kq < KQ; ++kq)
      sm90::Wgmma<DH>::template rs<kBf16>(acc, a[kq][0], b_descriptor(cols, kq), 1);
    sm90::wgmma_commit();
  };
  auto half_product_from_shared = [&](float(&acc)[NH][4], unsigned a, unsigned cols) {
    sm90::wgmma_fence();
#pragma unroll
    for (int kq = 0; kq < KQ; ++kq)
      sm90::Wgmma<DH>::template ss_kn<kBf16>(acc, sm90::smem_descriptor(a + kq * 32, 16, 1024), b_descriptor(cols, kq),
                                             1);
    sm90::wgmma_commit();
  };

  float dk[NH][4], dv[NH][4];
  detail::zero_fragments(dk);
  detail::zero_fragments(dv);
  sm90::mbarrier_wait(kv_full, 0);
  using Turns = detail::DqTurns<Mods, BM, BN>;
  int* pending = nullptr;  // ordered: the counter of the tile whose adds have not passed their turn

#pragma unroll 1
  for (detail::QTileRing<Mods, BM, BN, S, kOrderedDq> ring(args, p, b, hk, k0, k1); ring.has_tile(); ring.next()) {
    const int i = ring.i, s = ring.slot(), h = ring.head(), q0 = ring.q0();
    const unsigned sQ = smem0 + kSmem.q(s);

    if (w == 0) {
      const int cls = ring.tile_class();
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
      unsigned pa[KQ][1][4];
      detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), pa);
      if constexpr (kSlope && !kScatter) {  // dV takes P^T from pa; dS^T the slope's product
#pragma unroll
        for (int nt = 0; nt < NQ; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) sacc[nt][e] *= dpacc[nt][e];
      }

      // ---- P^T for warpgroup 1, once it has read the previous tile's P^T and dS^T.
      if (i > 0) sm90::named_barrier_sync(detail::kTileRead, kPair);
      detail::store_key_rows(sP, pa, warp_in_group, g, t);
      sm90::fence_async_shared();
      sm90::named_barrier_arrive(detail::kPReady, kPair);

      // ---- dV[:, lo] += P^T dO[:, lo]; dO is free once the product has read it. (Waited for here:
      // P^T's registers and dV's in flight beside P^T, the slope and dP^T make ptxas spill.)
      sm90::mbarrier_wait(do_full, i & 1);
      half_product_from_registers(dv, pa, sdO);
      sm90::wgmma_wait<0>();
      __syncwarp();
      if (lane == 0) sm90::mbarrier_arrive(do_empty);

      // ---- dP^T from warpgroup 1.
      sm90::named_barrier_sync(detail::kDpReady, kPair);
#pragma unroll
      for (int nt = 0; nt < NQ; ++nt) lds_128f(sDPt + nt * 32 * 16, dpacc[nt]);

      // ---- dS^T = P^T (dP^T - delta), times the slope: in sacc; to shared memory for warpgroup 1.
      detail::transposed_ds<Mods, kScatter, kSlope>(sacc, dpacc, xs, cta, grads, smem0 + kSmem.delta(s), b, h, key_row0,
                                                    q0, t);
      unsigned da[KQ][1][4];
      detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), da);
      detail::store_key_rows(sDS, da, warp_in_group, g, t);
      sm90::fence_async_shared();
      sm90::named_barrier_arrive(detail::kDsReady, kPair);

      // ---- dK[:, lo] += dS^T Q[:, lo].
      half_product_from_registers(dk, da, sQ);
    } else {
      if (i > 0) sm90::named_barrier_arrive(detail::kTileRead, kPair);  // the previous tile's reads are done
      sm90::mbarrier_wait(do_full, i & 1);

      // ---- dP^T = V dO^T, to shared memory for warpgroup 0 (which read the previous tile's before
      // its dS^T, that this warpgroup waited for).
      float dpacc[NQ][4];
      detail::transposed_product<kBf16, D, BM, BN>(dpacc, sV, sdO);
      sm90::wgmma_wait<0>();
#pragma unroll
      for (int nt = 0; nt < NQ; ++nt) sts_128f(sDPt + nt * 32 * 16, dpacc[nt]);
      sm90::named_barrier_arrive(detail::kDpReady, kPair);

      // ---- dV[:, hi] += P^T dO[:, hi]; dO is free once the product has read it.
      sm90::named_barrier_sync(detail::kPReady, kPair);
      half_product_from_shared(dv, sP, sdO);
      sm90::wgmma_wait<0>();
      __syncwarp();
      if (lane == 0) sm90::mbarrier_arrive(do_empty);

      // ---- dK[:, hi] += dS^T Q[:, hi].
      sm90::mbarrier_wait(q_full(s), ring.parity());
      sm90::named_barrier_sync(detail::kDsReady, kPair);
      half_product_from_shared(dk, sDS, sQ);
    }

    // ---- dQ[:, half] += dS K[:, half]: 64 queries x 64 columns at a time (A = dS^T M-major, B = K
    // N-major), staged in the warpgroup's buffer and added to the query tile's span of dq_accum.
    float* dq_tile = (kOrderedDq ? Turns::accum(args, n_block) : args.dq_accum) +
                     ((static_cast<i64>(b) * args.Hq + h) * args.Tq_pad + q0) * D;
    // Deterministic dQ (kOrderedDq): the kv tiles below this one that reach the query tile add
    // first. The two warpgroups add disjoint columns, so they wait for the same count. The
    // previous tile's adds have had this tile's products to land: their turn passes now.
    int* turns = kOrderedDq ? Turns::counter(args, b, h, q0 / BM, n_block) : nullptr;
    if constexpr (kOrderedDq) detail::pass_dq_turn<Turns>(pending, dq_leader);
    const unsigned staging = smem0 + kSmem.dq(w);
    // The warp's first query row, opaque to the compiler: the 16 swizzled staging addresses are
    // then computed here, per tile, instead of hoisted out of the tile loop into 16 registers that
    // stay live through the mods (ptxas spilled for soft-capping and bias-table score mods).
    int warp_row = warp_in_group * 16 + g;
    asm volatile("" : "+r"(warp_row));
#pragma unroll
    for (int c = 0; c < CB; ++c) {
      const int cb = w * CB + c;
      float dq[8][4];
      detail::dq_block_product<kBf16, BN>(dq, [&](int) { return sDS; }, sK + cb * BN * kRow);  // the CTA's 64 keys
      sm90::wgmma_wait<0>();  // also dK's product: the Q stage is free after the first block
      if (c == 0) {
        __syncwarp();  // the warp's reads of lse2 and delta come before its arrival releases the slot
        if (lane == 0) sm90::mbarrier_arrive(q_empty(s));
        if (kOrderedDq && warp_in_group == 0) {
          const int turn = Turns::turn(args, p, b, h, n_block, q0 / BM);
          if (lane == 0) Turns::wait(turns, Cfg::kConsumers * turn);
        }
      }
      // The staging buffer is rewritten once the copy engine has read its previous block.
      if (dq_leader) sm90::bulk_wait_read<0>();
      sm90::named_barrier_sync(1 + w, 128);
      detail::add_dq_block(staging, dq, warp_row, t, 1 + w, dq_leader,
                           dq_tile + cb * detail::DqBlockedLayout::kBlockFloats);
    }
    pending = turns;
  }
  if constexpr (kOrderedDq) detail::pass_dq_turn<Turns>(pending, dq_leader);  // the last tile's
  // Shared memory stays the CTA's until its last bulk add has read it.
  if (dq_leader) sm90::bulk_wait<0>();

  // ---- epilogue: dK = scale * acc, dV of this warpgroup's half (rows past Tkv are not written).
  detail::store_dk_dv<kBf16>(args, dk, dv, b, hk, key_row0, t, w * DH);
}

}  // namespace flexjit

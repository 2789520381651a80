// flexjit: warp-specialized forward kernel for Hopper (sm_90a): TMA loads, wgmma on the tensor
// cores, mbarrier pipelines.
//
// One CTA computes BM query rows of one (batch, head) with 1 + BM / 64 warpgroups:
//   - the producer warpgroup gives its registers away (setmaxnreg) and one thread of it issues the
//     TMA copies: Q once, then K and V of every visited kv tile into a kStages-deep ring, each
//     completing on its own mbarrier (k_full, v_full), after waiting for the consumers to free the
//     slot (kv_empty);
//   - each consumer warpgroup owns 64 query rows: S = Q K^T with both operands in shared memory
//     (wgmma m64nBNk16, K-major), the mods and the online softmax on the accumulator fragment
//     (common/logits.cuh, common/online_softmax.cuh: the same layout as mma.sync per warp), then
//     O += P V with P from registers and V N-major in shared memory (wgmma m64nDk16). Each turn a
//     warpgroup issues this tile's P V and the next tile's S together, then waits for both; the
//     consumers take turns (ping-pong on named barriers), so that one's softmax runs under the
//     others' products. Overlapping a warpgroup's own softmax with its P V (the next S issued
//     first, P V waited for after the softmax) measured slower, with or without the turns, and
//     spilled on masks that read tensors: bench/NOTES.md.
// Tiles are stored as TMA writes them with the 128-byte swizzle: D / 64 column blocks (V: Dv / 64,
// Cfg::kHeadDimV, MLA's 128 beside q and k's 192) of
// rows x 128 bytes, each 1024-byte aligned. Rows past Tq or Tkv are zero-filled by the copy engine
// and masked by the logits' bounds checks.
//
// Which kv tiles are visited, and with which class, is common/kv_schedule.cuh's: producer and
// consumers walk the same CTA-uniform sequence independently.
//
// The generator wraps it as
//   extern "C" __global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
//   flexjit_fwd(const __grid_constant__ flexjit::AttnArgs args,
//               const __grid_constant__ Mods::Params params,
//               const __grid_constant__ flexjit::TmaMaps maps) {
//     flexjit::attention_fwd_sm90<Mods, Cfg>(args, params, maps);
//   }
// launched with grid (ceil(Tq / kBlockM), Hq, B), block kThreads, dynamic smem Cfg::kSmemBytes.
// maps.q, maps.k, maps.v are 4-D tensor maps (D, T, H, B) (v's of Dv columns) with 128-byte
// swizzle and boxes of (64, kBlockM, 1, 1) for Q and (64, kBlockN, 1, 1) for K and V
// (api/tma_maps.cpp).
// A chunk of new tokens against a KV cache (chunked prefill) runs attention_chunk_sm90 with
// flexjit::ChunkArgs: each query tile's keys end at its sequence's own length; paged K and V are
// maps over (D, page_size, Hkv, num_pages) whose boxes of ChunkArgs::kv_box_rows rows lie in one
// page, the producer reading each box's page from the page table (a page outside the pool is past
// the map's bounds: the copy engine zero-fills it); the V rows past the sequence in its last tile
// (loaded from past its length, or not loaded) are zeroed before P V. Each consumer warpgroup
// checks the length and every page it reaches, and writes NaN rows for a broken sequence.
#pragma once

#include "common/attention_common.cuh"
#include "common/kv_cache.cuh"
#include "common/kv_schedule.cuh"
#include "common/logits.cuh"
#include "common/online_softmax.cuh"
#include "common/tile_config.cuh"
#include "sm90/fp8.cuh"
#include "sm90/ptx.cuh"
#include "sm90/tiles.cuh"
#include "sm90/wgmma_ops.cuh"

namespace flexjit {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kStages_, class Element_, bool kPersistent_ = false,
          int kHeadDimV_ = kHeadDim_>
struct Sm90FwdConfig : TileConfigBase<kHeadDim_, kBlockM_, kBlockN_, kStages_, Element_> {
  static constexpr int kHeadDimV = kHeadDimV_;  // of v and out
  // A grid of at most one wave of CTAs that take query tiles from AttnArgs::tile_counter, the
  // producer loading the next tile's Q and K/V under this one's last products and epilogue.
  static constexpr bool kPersistent = kPersistent_;
  static constexpr int kConsumers = kBlockM_ / 64;  // consumer warpgroups
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kElementBytes_ = ElementTraits<Element_>::kBytes;
  static constexpr int kSmemBytes =
      sm90::fwd_smem_bytes(kHeadDim_, kBlockM_, kBlockN_, kStages_, kHeadDimV_, kElementBytes_);
  static_assert(kSmemBytes <= sm90::kSmemPerCtaBytes, "the forward's shared memory");
  static constexpr unsigned kQBytes = sm90::fwd_tile_bytes(kBlockM_, kHeadDim_, kElementBytes_);
  static constexpr unsigned kKBytes = sm90::fwd_tile_bytes(kBlockN_, kHeadDim_, kElementBytes_);
  static constexpr unsigned kVBytes = sm90::fwd_tile_bytes(kBlockN_, kHeadDimV_, kElementBytes_);
  static constexpr bool kServed = ElementTraits<Element_>::kIsFp8 ? sm90::serves_fp8_head_dims(kHeadDim_, kHeadDimV_)
                                                                  : sm90::serves_head_dims(kHeadDim_, kHeadDimV_);
  // One CTA per SM, or two for a one-consumer tile that fits twice (sm90/tiles.cuh).
  static constexpr int kMinBlocksPerSM = sm90::fwd_ctas_per_sm(kConsumers, kSmemBytes);
  // Registers per thread after reallocation: the producer keeps few, the consumers take the rest.
  // The persistent producer's loop over query tiles needs 40 (at 24 ptxas spills it on window,
  // sink and top-k masks). The CTA's share of the registers is what it was launched with (168 a
  // thread for 384 threads): setmaxnreg.inc waits for registers that another warpgroup gave
  // back, so producer + consumers must not exceed it.
  static constexpr int kProducerRegisters = kPersistent ? 40 : 24;
  // The rest shared by the consumers (at most 240 each, a multiple of 8): 240 for one or two
  // consumer warpgroups, 160 for three, 232 for one when two CTAs share the SM; persistent: 232
  // for two.
  static constexpr int kConsumerRegisters =
      sm90::consumer_registers(kConsumers, kProducerRegisters, kMinBlocksPerSM);
  // Every kFmaExpEvery-th column block's exponentials on the FMA pipe (0: none). Every other block
  // made the D = 128 FP8 kernel 6-13% slower (bench/NOTES.md), so none is.
  static constexpr int kFmaExpEvery = 0;
};

template <int D, class E>
using DefaultSm90FwdConfig = Sm90FwdConfig<D, sm90::default_fwd_tile(D).block_m, sm90::default_fwd_tile(D).block_n,
                                           sm90::default_fwd_tile(D).stages, E, sm90::default_fwd_tile(D).persistent>;

namespace sm90 {
// A query tile of the grid: query tile m_block of (b, h).
struct FwdTileIndex {
  int m_block, h, b;
};
// The persistent grid's order, the one the hardware launches the non-persistent grid in: tile w
// is query tile n_m - 1 - w % n_m (the last rows, the heaviest under causal-like masks, first) of
// (b, h) = divmod(w / n_m, Hq), so that the CTAs running at once share a few heads' K and V in L2.
__device__ __forceinline__ FwdTileIndex fwd_tile_of(int w, int n_m, int Hq) {
  const int bh = w / n_m;
  return {n_m - 1 - (w - bh * n_m), bh % Hq, bh / Hq};
}
}  // namespace sm90

namespace detail {

// The forward, reading k and v as a KV cache says when kKvCache (attention_chunk_sm90; kv_box_rows:
// ChunkArgs').
template <class Mods, class Cfg, bool kKvCache>
__device__ __forceinline__ void attention_fwd_sm90_body(const AttnArgs& args, const KvCacheRef& cache, int kv_box_rows,
                                                        const typename Mods::Params& p, const TmaMaps& maps) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int DV = Cfg::kHeadDimV;  // of V and O
  constexpr int BM = Cfg::kBlockM;
  constexpr int BN = Cfg::kBlockN;
  constexpr int S = Cfg::kStages;
  constexpr bool kBf16 = Cfg::kIsBf16;  // the products' type, and out's (bf16 for FP8 inputs)
  constexpr bool kFp8 = Cfg::kIsFp8;    // e4m3 q, k, v: 32-deep products, V transposed (sm90/fp8.cuh)
  constexpr int NN = BN / 8;            // n8 column blocks of S
  constexpr int ND = DV / 8;            // n8 column blocks of O
  constexpr int kStep = kFp8 ? 32 : 16; // the products' depth: 32 bytes of a swizzled row either way
  constexpr int KD = D / kStep;         // k steps of QK^T
  constexpr int KN = BN / kStep;        // k steps of PV
  constexpr unsigned kBlockBytes = sm90::kSwizzleBytes;  // one swizzled row of a column block
  constexpr int kBlockColumns = sm90::kSwizzleBytes / Cfg::kElementBytes;  // elements of such a row
  static_assert(!kFp8 || ((BN == 128 || BN == 64) && !kKvCache && !Cfg::kPersistent),
                "FP8: keys in tiles of 128 or 64 (a swizzle row of V transposed), no KV cache, no persistent grid");
  constexpr unsigned kQBytes = Cfg::kQBytes;
  constexpr unsigned kKBytes = Cfg::kKBytes;
  constexpr unsigned kVBytes = Cfg::kVBytes;
  static_assert(Cfg::kServed, "head dims not in the sm90 table");
  static_assert(BM % 64 == 0 && BM >= 64, "64 query rows per consumer warpgroup");
  static_assert(BN % 64 == 0 && BN <= 256, "kv tile must be a multiple of 64, at most 256");
  static_assert(S >= 2, "need at least a double-buffered K/V ring");

  // ---- shared memory: [Q | K ring | V ring | barriers | tile slots], from a 1024-byte aligned start.
  extern __shared__ __align__(1024) unsigned char flexjit_smem[];
  const unsigned smem0 = (smem_u32(flexjit_smem) + sm90::kTileAlign - 1) & ~unsigned(sm90::kTileAlign - 1);
  // The offsets are sm90/tiles.cuh's FwdSmemLayout, which also sizes Cfg::kSmemBytes.
  constexpr sm90::FwdSmemLayout kSmem(D, BM, BN, S, DV, Cfg::kElementBytes);
  const unsigned sQ = smem0 + kSmem.q();
  auto sK = [&](int s) { return smem0 + kSmem.k(s); };  // the K tile of ring stage s
  auto sV = [&](int s) { return smem0 + kSmem.v(s); };
  const unsigned q_full = smem0 + kSmem.q_full();
  auto k_full = [&](int s) { return smem0 + kSmem.k_full(s); };
  auto v_full = [&](int s) { return smem0 + kSmem.v_full(s); };
  auto kv_empty = [&](int s) { return smem0 + kSmem.kv_empty(s); };
  // Persistent grid: Q's slot free again (every consumer thread past its last S of the tile), and
  // the two tile slots, each written by the producer and published on its barrier.
  const unsigned q_empty = smem0 + kSmem.q_empty();
  auto tile_full = [&](int j) { return smem0 + kSmem.tile_full(j); };
  auto tile_slot = [&](int j) { return smem0 + kSmem.tile_slot(j); };
  constexpr int kConsumerWarps = Cfg::kConsumers * 4;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const int Tq = args.Tq;
  const int n_m = (Tq + BM - 1) / BM;
  const int tiles = n_m * args.Hq * args.B;  // persistent grid: tiles to take (the host bounds it)
  // Non-persistent grid: (query tile, h, b) from blockIdx, the heaviest query tiles first.
  const sm90::FwdTileIndex own_tile = {static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x),
                                       static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z)};

  // The keys of sequence b: the call's Tkv, or in a KV cache the sequence's own length (0 when
  // it is out of range) and its page table row (null when k and v are dense).
  auto sequence = [&](int b) {
    if constexpr (kKvCache) return cached_sequence<1>(cache, args.Tkv, b, 0, false);
    return CachedSequence{args.Tkv, false, nullptr};
  };

  if (tid == 0) {
    sm90::mbarrier_init(q_full, 1);
#pragma unroll
    for (int s = 0; s < S; ++s) {
      sm90::mbarrier_init(k_full(s), 1);
      sm90::mbarrier_init(v_full(s), 1);
      sm90::mbarrier_init(kv_empty(s), kConsumerWarps);
    }
    if constexpr (Cfg::kPersistent) {
      sm90::mbarrier_init(q_empty, Cfg::kConsumers * 128);
      sm90::mbarrier_init(tile_full(0), 1);
      sm90::mbarrier_init(tile_full(1), 1);
    }
    sm90::mbarrier_init_fence();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    sm90::registers_release<Cfg::kProducerRegisters>();
    if (tid != 0) return;
    sm90::tma_prefetch_descriptor(&maps.q);
    sm90::tma_prefetch_descriptor(&maps.k);
    sm90::tma_prefetch_descriptor(&maps.v);
    // Q of one query tile, then K and V of each tile it visits; `ring` counts the K/V tiles loaded
    // before it (the ring position carries over from tile to tile).
    auto produce = [&](const sm90::FwdTileIndex& at, int ring) {
      const int q0 = at.m_block * BM;
      const int hk = at.h / (args.Hq / args.Hkv);
      sm90::mbarrier_arrive_expect_tx(q_full, kQBytes);
#pragma unroll
      for (int cb = 0; cb < D / kBlockColumns; ++cb)
        sm90::tma_load_4d(sQ + cb * BM * kBlockBytes, &maps.q, q_full, cb * kBlockColumns, q0, at.h, at.b);
      const CachedSequence seq = sequence(at.b);
      const int Tkv = seq.len;
      const int* pages = seq.pages;
      KvTileSchedule<Mods, BN> kv(args, p, at.b, at.h, at.m_block, q0, min2(q0 + BM, Tq), Tkv);
      kv.start();
#pragma unroll 1
      for (; kv.has_tile(); kv.pop(), ++ring) {
        const int s = ring % S;
        // The slot's previous tile (ring - S) must be consumed: its phase (ring / S - 1) has completed.
        if (ring >= S) sm90::mbarrier_wait(kv_empty(s), ((ring / S) & 1) ^ 1);
        const int k0 = kv.tile() * BN;
        if constexpr (kKvCache) {
          if (pages != nullptr) {
            // Boxes of kv_box_rows keys, each inside one page, up to the sequence's end: the rows
            // after it stay as they were (the consumers zero V's there).
            const int boxes = (min2(BN, Tkv - k0) + kv_box_rows - 1) / kv_box_rows;
            const unsigned bytes = static_cast<unsigned>(boxes * kv_box_rows) * kBlockBytes * (D / 64);
            sm90::mbarrier_arrive_expect_tx(k_full(s), bytes);
            sm90::mbarrier_arrive_expect_tx(v_full(s), DV == D ? bytes : bytes / D * DV);
#pragma unroll 1
            for (int j = 0; j < boxes; ++j) {
              const int key = k0 + j * kv_box_rows;
              const int page = page_of(cache, pages, key), slot = key % cache.page_size;
              const unsigned row = j * kv_box_rows * kBlockBytes;
#pragma unroll
              for (int cb = 0; cb < D / 64; ++cb) {
                sm90::tma_load_4d(sK(s) + cb * BN * kBlockBytes + row, &maps.k, k_full(s), cb * 64, slot, hk, page);
                if (cb < DV / 64)
                  sm90::tma_load_4d(sV(s) + cb * BN * kBlockBytes + row, &maps.v, v_full(s), cb * 64, slot, hk, page);
              }
            }
            continue;
          }
        }
        sm90::mbarrier_arrive_expect_tx(k_full(s), kKBytes);
#pragma unroll
        for (int cb = 0; cb < D / kBlockColumns; ++cb)
          sm90::tma_load_4d(sK(s) + cb * BN * kBlockBytes, &maps.k, k_full(s), cb * kBlockColumns, k0, hk, at.b);
        sm90::mbarrier_arrive_expect_tx(v_full(s), kVBytes);
        if constexpr (kFp8) {
          // V transposed: DV rows of this tile's BN keys (maps.v is over AttnArgs::vt, swizzled by BN bytes).
          sm90::tma_load_4d(sV(s), &maps.v, v_full(s), k0, 0, hk, at.b);
        } else {
#pragma unroll
          for (int cb = 0; cb < DV / 64; ++cb)
            sm90::tma_load_4d(sV(s) + cb * BN * kBlockBytes, &maps.v, v_full(s), cb * 64, k0, hk, at.b);
        }
      }
      return ring;
    };
    if constexpr (!Cfg::kPersistent) {
      produce(own_tile, 0);
    } else {
      int w = blockIdx.x;
      int ring = 0;
#pragma unroll 1
      for (int j = 0;; ++j) {
        // Publish tile j (tiles or more: the end); the release of the arrival orders the store.
        sm90::sts_s32(tile_slot(j), w);
        sm90::mbarrier_arrive(tile_full(j));
        if (w >= tiles) break;
        const int w_next = atomicAdd(args.tile_counter, 1) + static_cast<int>(gridDim.x);  // under this tile's loads
        if (j > 0) sm90::mbarrier_wait(q_empty, (j - 1) & 1);  // the consumers' last S of tile j - 1
        ring = produce(sm90::fwd_tile_of(w, n_m, args.Hq), ring);
        w = w_next;
      }
    }
    return;
  }

  // ------------------------------------------------------------------ consumers
  sm90::registers_claim<Cfg::kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int lane = tid & 31;
  const int warp_in_group = (tid / 32) & 3;
  const int g = lane >> 2;
  const int t = lane & 3;
  const int group_row0 = consumer * 64;  // first tile row of this warpgroup
  // FP8: the scores of (b, kv head) are <q, k> times q's and k's descale factors, folded into the
  // scale per query tile (consume); out is multiplied by v's in the epilogue.

  // Ping-pong: consumer c issues its products after consumer c - 1 has issued its own (named
  // barrier kTurnBarrier + c: 128 threads wait, the previous warpgroup's 128 arrive), so one
  // warpgroup's softmax runs under the other's products instead of colliding with them.
  constexpr int kTurnBarrier = 1;  // ids kTurnBarrier .. kTurnBarrier + kConsumers - 1 (0 is __syncthreads)
  auto my_turn = [&] {
    if constexpr (Cfg::kConsumers > 1) sm90::named_barrier_sync(kTurnBarrier + consumer, 256);
  };
  auto pass_turn = [&] {
    if constexpr (Cfg::kConsumers > 1) sm90::named_barrier_arrive(kTurnBarrier + (consumer + 1) % Cfg::kConsumers, 256);
  };
  // A warpgroup's own barrier (+ consumer), for what its 128 threads do alone (a KV cache).
  constexpr int kCheckBarrier = kTurnBarrier + Cfg::kConsumers;

  // One query tile: its visited kv tiles from ring position `ring` on, Q in phase q_phase of
  // q_full. Returns the ring position after it. (The tile slot it came from may be rewritten once
  // this tile's Q is released: `at` is read once, before.)
  auto consume = [&](const sm90::FwdTileIndex& at, int ring, unsigned q_phase) {
    const int b = at.b;
    const int h = at.h;
    const int q0 = at.m_block * BM;
    const int row0 = q0 + group_row0 + warp_in_group * 16;  // first row of this warp
    const typename detail::CtaOf<Mods>::type cta = detail::CtaOf<Mods>::make(p, b, h);
    float score_scale = args.scale, out_scale = 1.f;
    if constexpr (kFp8) {
      const int hk = h / (args.Hq / args.Hkv);
      score_scale *= detail::descale_of(args, args.q_descale, b, hk) * detail::descale_of(args, args.k_descale, b, hk);
      out_scale = detail::descale_of(args, args.v_descale, b, hk);
    }
    const float factor = Mods::kHasScoreMod ? 1.f : kFp8 ? score_scale * kLog2e : args.scale_log2;
    // A KV cache: this warpgroup checks the sequence's length and every page it reaches (a broken
    // sequence's rows become NaN below); the producer has walked the same keys.
    CachedSequence seq = sequence(b);
    if constexpr (kKvCache) {
      seq = cached_sequence<128>(cache, args.Tkv, b, tid % 128, true);
      seq.bad = sm90::named_barrier_or(kCheckBarrier + consumer, 128, seq.bad);
    }
    const int Tkv = seq.len;
    KvTileSchedule<Mods, BN> kv(args, p, b, h, at.m_block, q0, min2(q0 + BM, Tq), Tkv);
    kv.start();

    float o[1][ND][4];
    float m_run[1][2] = {{neg_inf(), neg_inf()}};
    float l_run[1][2] = {{0.f, 0.f}};
#pragma unroll
    for (int nd = 0; nd < ND; ++nd)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[0][nd][e] = 0.f;
    const bool q_tail = (Mods::kHasMask || Mods::kHasScoreMod) && q0 + BM > Tq;

    // S = Q K^T of the tile in ring slot s, issued (not waited for).
    float sacc[1][NN][4];
    auto issue_qk = [&](int s) {
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        const unsigned column = kk / 4, within = (kk % 4) * 32u;
        const unsigned long long a =
            sm90::smem_descriptor(sQ + column * BM * kBlockBytes + group_row0 * kBlockBytes + within, 16, 1024);
        const unsigned long long bk =
            sm90::smem_descriptor(sK(s) + column * BN * kBlockBytes + within, 16, 1024);
        if constexpr (kFp8)
          sm90::Wgmma<BN>::ss_e4m3(sacc[0], a, bk, kk > 0);
        else
          sm90::Wgmma<BN>::template ss<kBf16>(sacc[0], a, bk, kk > 0);
      }
      sm90::wgmma_commit();
    };
    // The logits and probabilities of the S tile at k0 of class cls (O untouched).
    float corr[1][2];
    auto softmax = [&](int k0, int cls) {
      detail::apply_tile_logits<Mods>(sacc, cta, args, score_scale, Tkv, b, h, row0 + g, k0 + 2 * t, cls,
                                      k0 + BN > Tkv || q_tail);
      return detail::softmax_exponentiate<Cfg::kFmaExpEvery>(sacc, m_run, l_run, corr, factor);
    };
    unsigned pa[KN][1][4];
    // O += P V of the tile in ring slot s (issued and committed, not waited for). FP8: V
    // transposed is K-major like K, 32 keys (bytes) of its BN-byte swizzled rows a step.
    auto issue_pv = [&](int s) {
#pragma unroll
      for (int kn = 0; kn < KN; ++kn) {
        if constexpr (kFp8) {
          const unsigned long long bv = sm90::smem_descriptor(sV(s) + kn * 32u, 16, 8 * BN, BN);
          sm90::Wgmma<DV>::rs_e4m3(o[0], pa[kn][0], bv, 1);
        } else {
          const unsigned long long bv = sm90::smem_descriptor(sV(s) + kn * 16 * kBlockBytes, BN * kBlockBytes, 1024);
          sm90::Wgmma<DV>::template rs<kBf16>(o[0], pa[kn][0], bv, 1);
        }
      }
      sm90::wgmma_commit();
    };
    auto pack = [&] {
      if constexpr (kFp8)
        detail::pack_probabilities_e4m3(sacc, pa);
      else
        detail::pack_probabilities<kBf16>(sacc, pa);
    };
    // A KV cache: the V rows of the tile at k0 in slot s past the sequence's end hold what was
    // there (rows loaded from past the length, or not loaded at all), and P V would multiply
    // their zero probabilities by them (0 * NaN). This warpgroup zeroes them, then makes its
    // writes visible to its own wgmma (the other consumers write the same zeros for theirs).
    auto zero_v_past_end = [&](int s, int k0) {
      if constexpr (kKvCache) {
        if (k0 + BN <= Tkv) return;
        constexpr int kVectors = (DV / 64) * 8;  // 16-byte vectors of a row
        const int valid = Tkv - k0;
        for (int i = tid % 128; i < (BN - valid) * kVectors; i += 128) {
          const int row = valid + i / kVectors, cb = (i % kVectors) / 8, v = i % 8;
          const float zero[4] = {0.f, 0.f, 0.f, 0.f};
          sts_128f(sV(s) + (cb * BN + row) * kBlockBytes + v * 16, zero);
        }
        sm90::fence_async_shared();
        sm90::named_barrier_sync(kCheckBarrier + consumer, 128);
      }
    };
    // Q is no longer read once this thread's last S has completed (persistent grid). Every
    // consumer thread arrives, so that each one's arrival also releases its own read of the tile
    // slot, which the producer rewrites two tiles on (one arrival per warp would leave the other
    // lanes' reads unordered before that write).
    auto release_q = [&] {
      if constexpr (Cfg::kPersistent) sm90::mbarrier_arrive(q_empty);
    };

    // Per visited tile: S = Q K^T, its logits and softmax, P; then O += P V (peeled by one tile, so
    // that the loop body ends with the next tile's P ready). r: the ring position of the tile
    // whose P is in pa.
    sm90::mbarrier_wait(q_full, q_phase);
    if (kv.has_tile()) {
      // The last consumer hands the first turn to consumer 0; every warpgroup then takes one turn
      // per batch of products, and the last one skips its final pass so the barriers end balanced.
      if (consumer == Cfg::kConsumers - 1) pass_turn();
      sm90::mbarrier_wait(k_full(ring % S), (ring / S) & 1);
      my_turn();
      sm90::wgmma_fence();
      issue_qk(ring % S);
      pass_turn();
      sm90::wgmma_wait<0>();
      softmax(kv.tile() * BN, kv.tile_class());  // O is still zero: nothing to rescale
      pack();
      int pa_k0 = kv.tile() * BN;  // the tile whose P is in pa
      int r = ring;
#pragma unroll 1
      for (kv.pop(); kv.has_tile(); kv.pop(), ++r) {
        const int s = r % S, next = (r + 1) % S;
        sm90::mbarrier_wait(k_full(next), ((r + 1) / S) & 1);
        sm90::mbarrier_wait(v_full(s), (r / S) & 1);
        zero_v_past_end(s, pa_k0);
        my_turn();
        sm90::wgmma_fence();
        issue_pv(s);
        issue_qk(next);
        pass_turn();
        sm90::wgmma_wait<0>();
        if (lane == 0) sm90::mbarrier_arrive(kv_empty(s));
        if (softmax(kv.tile() * BN, kv.tile_class())) detail::rescale_output(o, corr);
        pack();
        pa_k0 = kv.tile() * BN;
      }
      release_q();
      // The last tile's P V.
      const int s = r % S;
      sm90::mbarrier_wait(v_full(s), (r / S) & 1);
      zero_v_past_end(s, pa_k0);
      my_turn();
      sm90::wgmma_fence();
      issue_pv(s);
      if (consumer != Cfg::kConsumers - 1) pass_turn();
      sm90::wgmma_wait<0>();
      if (lane == 0) sm90::mbarrier_arrive(kv_empty(s));
      ring = r + 1;
    } else {
      release_q();
    }

    // ---- epilogue: sink, normalisation, LSE, O straight from the accumulators.
    float sink2 = 0.f;
    if constexpr (Mods::kHasSink) sink2 = Mods::sink(p, b, h) * kLog2e;
    unsigned short* gO =
        static_cast<unsigned short*>(args.o) + static_cast<i64>(b) * args.o_b + static_cast<i64>(h) * args.o_h;
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int row = row0 + g + hf * 8;
      float lse;
      float inv = detail::finish_row<Mods::kHasSink>(l_run[0][hf], m_run[0][hf], sink2, lse) * out_scale;
      if (kKvCache && seq.bad) inv = lse = __int_as_float(0x7fc00000);  // NaN rows, as decode gives them
      if (row < Tq) {
        if (args.lse != nullptr && t == 0) args.lse[(static_cast<i64>(b) * args.Hq + h) * Tq + row] = lse;
        unsigned short* out_row = gO + static_cast<i64>(row) * args.o_t + 2 * t;
#pragma unroll
        for (int nd = 0; nd < ND; ++nd)
          sm90::stg_32(out_row + nd * 8, pack2<kBf16>(o[0][nd][2 * hf] * inv, o[0][nd][2 * hf + 1] * inv));
      }
    }
    return ring;
  };

  if constexpr (!Cfg::kPersistent) {
    consume(own_tile, 0, 0);
  } else {
    int ring = 0;
#pragma unroll 1
    for (int j = 0;; ++j) {
      sm90::mbarrier_wait(tile_full(j), (j >> 1) & 1);
      const int w = sm90::lds_s32(tile_slot(j));
      if (w >= tiles) break;
      ring = consume(sm90::fwd_tile_of(w, n_m, args.Hq), ring, j & 1);
    }
  }
}

}  // namespace detail

template <class Mods, class Cfg>
__device__ __forceinline__ void attention_fwd_sm90(const AttnArgs& args, const typename Mods::Params& p,
                                                   const TmaMaps& maps) {
  detail::attention_fwd_sm90_body<Mods, Cfg, false>(args, KvCacheRef{}, 0, p, maps);
}

template <class Mods, class Cfg>
__device__ __forceinline__ void attention_chunk_sm90(const ChunkArgs& args, const typename Mods::Params& p,
                                                     const TmaMaps& maps) {
  detail::attention_fwd_sm90_body<Mods, Cfg, true>(args, args.cache, args.kv_box_rows, p, maps);
}

}  // namespace flexjit

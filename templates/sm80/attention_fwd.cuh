// flexjit: FlashAttention-2 style forward kernel for sm_80+ (mma.sync m16n8k16, cp.async, ldmatrix).
//
// One CTA computes BM query rows of one (batch, head). Each warp owns 16*MT consecutive rows, keeps
// its Q fragments in registers (or re-reads them from shared memory, Cfg::kQInRegs), and streams the
// K/V tiles of the kv range through a kStages-deep cp.async ring in shared memory. S = Q K^T and
// O += P V run on the tensor cores with fp32 accumulators; the online softmax works in the log2
// domain (exp2 with log2(e) folded into the scale); P goes from the S accumulators straight into the
// A operand of the PV mma (the C layout of m16n8 matches the A layout of m16k16), so it never touches
// shared memory. The running max is rescaled lazily (only when it grows by more than 2^8), which
// skips the O *= correction multiplies on almost every tile.
//
// The generated `Mods` (docs/design.md, "The Mods contract") supplies mask, score, sink, the per-CTA
// values and the tile classifier; common/kv_schedule.cuh decides which kv tiles a query tile visits
// (closed-form kv range, block list or tile map) and with which class: EMPTY tiles are never
// loaded, FULL tiles skip mask(), PARTIAL tiles evaluate it per element.
//
// The generator wraps it as, for example:
//   extern "C" __global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
//   flexjit_fwd(const __grid_constant__ flexjit::AttnArgs args,
//               const __grid_constant__ Mods::Params params) {
//     flexjit::attention_fwd_sm80<Mods, Cfg>(args, params);
//   }
// and, for a chunk of new tokens against a KV cache (chunked prefill), attention_chunk_sm80 with
// flexjit::ChunkArgs: the same kernel reading each sequence's keys from the cache (its own length;
// with a page table, each key row from its page), and NaN rows for a sequence whose length or
// pages are broken, as the decode kernel gives them.
// launched with grid (ceil(Tq / kBlockM), Hq, B), block kThreads, dynamic smem Cfg::kSmemBytes
// (above 48 KB: the host raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first).
#pragma once

#include "common/attention_common.cuh"
#include "common/kv_cache.cuh"
#include "common/kv_schedule.cuh"
#include "common/logits.cuh"
#include "common/online_softmax.cuh"
#include "common/tile_config.cuh"
#include "sm80/copy_tile.cuh"
#include "sm80/tiles.cuh"
#include "sm80/warp_mma.cuh"

namespace flexjit {

// ---------------------------------------------------------------------------------------------
// Tile configuration.
//   kHeadDim  D, a multiple of 16 in [16, 256].
//   kBlockM   query rows per CTA; must be a multiple of 16 * kWarps (each warp owns whole m16 tiles).
//   kBlockN   keys per K/V tile, a multiple of 16.
//   kStages   depth of the K/V cp.async ring (>= 2): tile i+kStages-1 is in flight while i computes.
//   kQInRegs  keep Q fragments in registers for the whole kernel (saves shared-memory bandwidth);
//             when false they are re-read with ldmatrix for every K tile (saves MT*D/4 registers:
//             the shipped defaults all do this, to leave generated masks register headroom).
//   kMinBlocksPerSM  for the wrapper's __launch_bounds__ (2: two CTAs per SM, <= 255 registers).
//   kHeadDimV  Dv, the head dim of v and out (MLA's 128 beside 192), a multiple of 16 <= D: V's
//             tiles fill the first Dv columns of rows laid out for D.
// Shared memory: rows are padded by 8 elements (16 bytes) so that the 8 row addresses of every
// ldmatrix phase fall into distinct bank groups for any D that is a multiple of 16; this works for
// D = 80 or 96 too, where an XOR swizzle over 8 chunks would not fit the row.
template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_, int kStages_, class Element_,
          bool kQInRegs_ = true, int kMinBlocksPerSM_ = 1, int kHeadDimV_ = kHeadDim_>
struct FwdConfig : WarpTileConfig<kHeadDim_, kBlockM_, kBlockN_, kWarps_, kStages_, Element_> {
  static constexpr int kHeadDimV = kHeadDimV_;
  static constexpr bool kQInRegs = kQInRegs_;
  static constexpr int kMinBlocksPerSM = kMinBlocksPerSM_;
  static constexpr int kSmemStride = sm80::fwd_smem_stride(kHeadDim_);  // elements per padded smem row
  static constexpr bool kQAliased = sm80::fwd_q_aliased(kBlockM_, kBlockN_, kQInRegs_);
  static constexpr int kSmemBytes = sm80::fwd_smem_bytes(kHeadDim_, kBlockM_, kBlockN_, kStages_, kQInRegs_);
};

// The shipped tile for head dim D (sm80/tiles.cuh holds the table).
template <int D, class E>
using DefaultFwdConfig = FwdConfig<D, sm80::default_fwd_tile(D).block_m, sm80::default_fwd_tile(D).block_n,
                                   sm80::default_fwd_tile(D).warps, sm80::default_fwd_tile(D).stages, E,
                                   sm80::default_fwd_tile(D).q_in_registers,
                                   sm80::default_fwd_tile(D).min_blocks_per_sm>;


namespace detail {

// The forward, reading k and v as a KV cache says when kKvCache (attention_chunk_sm80).
template <class Mods, class Cfg, bool kKvCache>
__device__ __forceinline__ void attention_fwd_sm80_body(const AttnArgs& args, const KvCacheRef& cache,
                                                        const typename Mods::Params& p) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int DV = Cfg::kHeadDimV;  // of V and O
  constexpr int BM = Cfg::kBlockM;
  constexpr int BN = Cfg::kBlockN;
  constexpr int W = Cfg::kWarps;
  constexpr int S = Cfg::kStages;
  constexpr bool kBf16 = Cfg::kIsBf16;
  constexpr int kThreads = Cfg::kThreads;
  constexpr int MT = BM / (16 * W);  // m16 tiles per warp
  constexpr int KD = D / 16;         // k16 steps over the head dim (QK^T)
  constexpr int ND = DV / 8;         // n8 tiles over V's head dim (PV output)
  constexpr int NN = BN / 8;         // n8 tiles over the keys (S)
  constexpr int KN = BN / 16;        // k16 steps over the keys (PV)
  constexpr int LDS = Cfg::kSmemStride;
  constexpr int kRowBytes = LDS * 2;
  constexpr unsigned kTileBytes = BN * kRowBytes;
  static_assert(D % 16 == 0 && D >= 16 && D <= 256, "head dim must be a multiple of 16 in [16, 256]");
  static_assert(DV % 16 == 0 && DV >= 16 && DV <= D, "v's head dim must be a multiple of 16 in [16, D]");
  static_assert(BM % (16 * W) == 0 && MT >= 1, "each warp owns whole m16 row tiles");
  static_assert(BN % 16 == 0 && BN >= 16, "kv tile must be a multiple of 16");
  static_assert(S >= 2, "need at least a double-buffered K/V ring");
  static_assert(sizeof(typename Cfg::Element) == 2, "16-bit elements only");

  // Shared memory: a ring of S slots, each [K tile | V tile] (BN padded rows each), and the Q tile
  // (BM rows) either in slot S-1 (kQAliased: the prologue only fills slots 0..S-2, and Q moves to
  // registers before slot S-1 is refilled) or in front of the ring.
  extern __shared__ __align__(128) unsigned char flexjit_smem[];
  constexpr bool kQAliased = Cfg::kQAliased;
  constexpr unsigned kSlotBytes = 2 * kTileBytes;
  const unsigned smem0 = smem_u32(flexjit_smem);
  const unsigned sRing = kQAliased ? smem0 : smem0 + BM * kRowBytes;
  const unsigned sQ = kQAliased ? sRing + (S - 1) * kSlotBytes : smem0;

  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;  // mma group: fragment row
  const int t = lane & 3;   // thread in group: fragment column pair
  const int b = blockIdx.z;
  const int h = blockIdx.y;
  // Heaviest query tiles first (causal-like masks give later tiles more keys): smaller tail.
  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int Tq = args.Tq;
  const int q0 = m_block * BM;
  const int q1 = min2(q0 + BM, Tq);
  const int hk = h / (args.Hq / args.Hkv);
  const int warp_row0 = warp * 16 * MT;  // first tile row owned by this warp

  // The keys of sequence b: the call's Tkv, or the sequence's own length in a KV cache, whose pages
  // every CTA checks (a broken sequence gets NaN rows and reads nothing).
  int Tkv = args.Tkv;
  const int* pages = nullptr;  // the sequence's page table row when k and v are paged
  if constexpr (kKvCache) {
    const CachedSequence seq = cached_sequence<kThreads>(cache, args.Tkv, b, tid, true);
    if (__syncthreads_or(seq.bad)) {
      write_nan_rows<DV, kThreads, kBf16>(args, b, h, q0, q1, tid);
      return;
    }
    Tkv = seq.len;
    pages = seq.pages;
  }
  // Paged k and v start at their pool: a key's page gives its batch offset (k_b: page stride).
  const i64 kv_batch = kKvCache && pages != nullptr ? 0 : b;

  const unsigned short* gQ =
      static_cast<const unsigned short*>(args.q) + static_cast<i64>(b) * args.q_b + static_cast<i64>(h) * args.q_h;
  const unsigned short* gK =
      static_cast<const unsigned short*>(args.k) + kv_batch * args.k_b + static_cast<i64>(hk) * args.k_h;
  const unsigned short* gV =
      static_cast<const unsigned short*>(args.v) + kv_batch * args.v_b + static_cast<i64>(hk) * args.v_h;

  // Per-CTA values of the mods (e.g. an ALiBi slope), computed once here.
  const typename detail::CtaOf<Mods>::type cta = detail::CtaOf<Mods>::make(p, b, h);

  // ---- the kv tiles to visit, in order, with their classes (CTA-uniform).
  KvTileSchedule<Mods, BN> kv(args, p, b, h, m_block, q0, q1, Tkv);
  // Issue the K and V copies of the next visited tile into `slot` as two commit groups (K first,
  // so S = QK^T can start while V is still in flight). With nothing left, commit two empty groups
  // so the wait_group counts below stay fixed.
  auto issue = [&](int slot, int& entry) {
    if (kv.has_tile()) {
      const int k0 = kv.tile() * BN;
      const unsigned short* gk = gK + static_cast<i64>(k0) * args.k_t;
      const unsigned short* gv = gV + static_cast<i64>(k0) * args.v_t;
      const unsigned s_k = sRing + slot * kSlotBytes;
      if (kKvCache && pages != nullptr) {
        const int valid = min2(BN, Tkv - k0);
        if (cache.page_size % BN == 0) {
          // The tile lies in one page: one page-table read (a line the check above brought into
          // L1), then rows at a fixed stride as in a contiguous cache.
          const i64 page = page_of(cache, pages, k0);
          const i64 slot = k0 % cache.page_size;
          detail::copy_tile<BN, D, LDS, kThreads, true>(s_k, gK + page * args.k_b + slot * args.k_t, args.k_t, valid,
                                                        tid);
          cp_async_commit();
          detail::copy_tile<BN, DV, LDS, kThreads, true>(s_k + kTileBytes, gV + page * args.v_b + slot * args.v_t,
                                                         args.v_t, valid, tid);
          cp_async_commit();
        } else {
          // Pages smaller than the tile (or not a multiple of it): each key row from its page.
          const auto k_row = [&](int r) {
            const int key = k0 + r;
            return gK + page_of(cache, pages, key) * args.k_b + static_cast<i64>(key % cache.page_size) * args.k_t;
          };
          const auto v_row = [&](int r) {
            const int key = k0 + r;
            return gV + page_of(cache, pages, key) * args.v_b + static_cast<i64>(key % cache.page_size) * args.v_t;
          };
          detail::copy_tile_rows<BN, D, LDS, kThreads>(s_k, k_row, gK, valid, tid);
          cp_async_commit();
          detail::copy_tile_rows<BN, DV, LDS, kThreads>(s_k + kTileBytes, v_row, gV, valid, tid);
          cp_async_commit();
        }
      } else if (k0 + BN <= Tkv) {
        detail::copy_tile<BN, D, LDS, kThreads, false>(s_k, gk, args.k_t, BN, tid);
        cp_async_commit();
        detail::copy_tile<BN, DV, LDS, kThreads, false>(s_k + kTileBytes, gv, args.v_t, BN, tid);
        cp_async_commit();
      } else {
        detail::copy_tile<BN, D, LDS, kThreads, true>(s_k, gk, args.k_t, Tkv - k0, tid);
        cp_async_commit();
        detail::copy_tile<BN, DV, LDS, kThreads, true>(s_k + kTileBytes, gv, args.v_t, Tkv - k0, tid);
        cp_async_commit();
      }
      entry = kv.tile() * 4 + kv.tile_class();
      kv.pop();
    } else {
      cp_async_commit();
      cp_async_commit();
      entry = -1;
    }
  };

  // ---- prologue: Q, then the first S-1 K/V tiles.
  detail::copy_tile<BM, D, LDS, kThreads, true>(sQ, gQ + static_cast<i64>(q0) * args.q_t, args.q_t, Tq - q0, tid);
  cp_async_commit();
  kv.start();
  // Ring positions: tile * 4 + class of the tile each slot holds (-1: none); position 0 is current.
  int ring[S];
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s, ring[s]);
  ring[S - 1] = -1;

  cp_async_wait<2 * (S - 1)>();  // Q has landed (this thread's part)
  __syncthreads();               // ... and everybody's

  // Per-lane ldmatrix offsets (bytes).
  //   A (Q), row-major 16x16: matrices (rows 0-7 | 8-15) x (cols 0-7 | 8-15) -> a0..a3.
  const unsigned q_off = (warp_row0 + (lane & 15)) * kRowBytes + (lane >> 4) * 16;
  //   B (K), K is [key][d] = the "col" operand as stored: matrices (keys 0-7, d 0-7), (keys 0-7,
  //   d 8-15), (keys 8-15, d 0-7), (keys 8-15, d 8-15) -> b0,b1 of n-tile j and of n-tile j+1.
  const unsigned k_off = ((lane & 7) + ((lane >> 4) << 3)) * kRowBytes + ((lane >> 3) & 1) * 16;
  //   B (V) with .trans, V is [key][d]: matrices (keys 0-7 | 8-15) x (d 0-7 | 8-15) -> b0,b1 of
  //   d-tile j and of d-tile j+1.
  const unsigned v_off = (lane & 15) * kRowBytes + (lane >> 4) * 16;

  const detail::SmemFragments<false> q_frag{sQ, q_off, kRowBytes};
  // [k16 step][m16 tile], as warp_mma takes them; unused (and removed) if !kQInRegs.
  unsigned qf[Cfg::kQInRegs ? KD : 1][Cfg::kQInRegs ? MT : 1][4];
  if constexpr (Cfg::kQInRegs) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) q_frag.load(kk, mt, qf[kk][mt]);
  }

  float o[MT][ND][4];
  float m_run[MT][2];  // running max of the log2-domain logits, per fragment row (g, g+8)
  float l_run[MT][2];  // running partial row sum (this thread's columns only; quad-reduced at the end)
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int nd = 0; nd < ND; ++nd)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][nd][e] = 0.f;
    m_run[mt][0] = m_run[mt][1] = neg_inf();
    l_run[mt][0] = l_run[mt][1] = 0.f;
  }

  // No score mod: logits stay raw dot products and the scale is applied inside exp2 (scale > 0).
  const float factor = Mods::kHasScoreMod ? 1.f : args.scale_log2;
  // Tiles whose element logic is needed regardless of their class: the kv tail, and (when user hooks
  // could be called) the query tail, so that hooks never see q >= Tq or kv >= Tkv.
  const bool q_tail = (Mods::kHasMask || Mods::kHasScoreMod) && q0 + BM > Tq;

  int slot = 0;
#pragma unroll 1
  while (ring[0] >= 0) {
    const int k0 = (ring[0] >> 2) * BN;
    const int cls = ring[0] & 3;

    cp_async_wait<2 * S - 3>();  // K of the current tile has landed
    __syncthreads();             // visible to all; all warps are also done with the previous slot
    {
      const int refill = slot == 0 ? S - 1 : slot - 1;  // the slot consumed last iteration
      issue(refill, ring[S - 1]);
    }

    // ---- S = Q K^T (fp32)
    float sacc[MT][NN][4];
    const detail::SmemFragments<false> k_frag{sRing + slot * kSlotBytes + k_off, 0, kRowBytes};
    detail::zero_fragments(sacc);
    detail::warp_mma<kBf16, KD>(sacc, detail::regs_or_smem<Cfg::kQInRegs>(qf, q_frag), k_frag);

    // ---- mask / score mod -> logits
    detail::apply_tile_logits<Mods>(sacc, cta, args, args.scale, Tkv, b, h, q0 + warp_row0 + g, k0 + 2 * t, cls,
                                    k0 + BN > Tkv || q_tail);

    // ---- online softmax (common/online_softmax.cuh)
    detail::online_softmax_step(sacc, o, m_run, l_run, factor);

    // P to 16-bit right away: half the registers of the fp32 values across the V wait and the PV mma.
    unsigned pa[KN][MT][4];
    detail::pack_probabilities<kBf16>(sacc, pa);

    cp_async_wait<2 * S - 2>();  // V of the current tile has landed
    __syncthreads();

    // ---- O += P V (P from registers)
    const detail::SmemFragments<true> v_frag{sRing + slot * kSlotBytes + kTileBytes + v_off, 0, kRowBytes};
    detail::warp_mma<kBf16, KN>(o, pa, v_frag);

#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      ring[s] = ring[s + 1];
    }
    ring[S - 1] = -1;
    slot = slot + 1 == S ? 0 : slot + 1;
  }

  // ---- epilogue: sink, normalisation, LSE, O through shared memory (16-byte coalesced stores).
  float sink2 = 0.f;
  if constexpr (Mods::kHasSink) sink2 = Mods::sink(p, b, h) * kLog2e;
  // O is staged through shared memory for 16-byte coalesced stores. Without aliasing it goes into
  // this warp's own Q rows (read by this warp only): a warp barrier is enough. With aliasing the
  // staging rows overlap ring slots other warps may still be reading: block barrier.
  const unsigned sO = kQAliased ? smem0 : sQ;
  if constexpr (kQAliased) {
    __syncthreads();
  } else {
    __syncwarp();
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int row = q0 + warp_row0 + mt * 16 + g + hf * 8;
      float lse;
      const float inv = detail::finish_row<Mods::kHasSink>(l_run[mt][hf], m_run[mt][hf], sink2, lse);
      if (args.lse != nullptr && t == 0 && row < Tq) args.lse[(static_cast<i64>(b) * args.Hq + h) * Tq + row] = lse;
      const unsigned srow = sO + (warp_row0 + mt * 16 + g + hf * 8) * kRowBytes + t * 4;
#pragma unroll
      for (int nd = 0; nd < ND; ++nd)
        sts_32(srow + nd * 16, pack2<kBf16>(o[mt][nd][2 * hf] * inv, o[mt][nd][2 * hf + 1] * inv));
    }
  }
  __syncwarp();
  unsigned short* gO =
      static_cast<unsigned short*>(args.o) + static_cast<i64>(b) * args.o_b + static_cast<i64>(h) * args.o_h;
  constexpr int kChunks = DV / 8;
#pragma unroll
  for (int i = 0; i < MT * DV / 16; ++i) {  // 16*MT rows x DV/8 chunks over 32 lanes
    const int c = lane + i * 32;
    const int r = c / kChunks;
    const int ch = c % kChunks;
    const int row = q0 + warp_row0 + r;
    if (row < Tq) {
      unsigned x0, x1, x2, x3;
      lds_128(sO + (warp_row0 + r) * kRowBytes + ch * 16, x0, x1, x2, x3);
      stg_128(gO + static_cast<i64>(row) * args.o_t + ch * 8, x0, x1, x2, x3);
    }
  }
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
template <class Mods, class Cfg>
__device__ __forceinline__ void attention_fwd_sm80(const AttnArgs& args, const typename Mods::Params& p) {
  detail::attention_fwd_sm80_body<Mods, Cfg, false>(args, KvCacheRef{}, p);
}

template <class Mods, class Cfg>
__device__ __forceinline__ void attention_chunk_sm80(const ChunkArgs& args, const typename Mods::Params& p) {
  detail::attention_fwd_sm80_body<Mods, Cfg, true>(args, args.cache, p);
}

}  // namespace flexjit

// flexjit: the backward's main kernel for Hopper (sm_90a): TMA loads, wgmma, one producer and
// block_n / 64 consumer warpgroups. The pre- and post-passes (delta, lse2, dq_accum; dq) are the
// sm80 family's (templates/sm80/attention_bwd.cuh), as is the arithmetic per (key, query) pair
// (common/bwd_tile.cuh): this kernel changes how the products are made.
//
// One CTA per block_n keys of one (batch, kv head), K and V loaded once by TMA. The query tiles
// that meet its keys (detail::QTileSchedule: the q range, or the transposed tile map) stream
// through a ring of `stages` slots holding Q, dO (TMA) and the rows' lse2 and delta (bulk copies),
// each slot full on q_full[s] and free again on q_empty[s].
// Consumer warpgroup w owns keys k0 + 64 w .. + 64 and keeps their dK and dV in registers. Per
// query tile, in the transposed layout (rows = keys, columns = queries; each warp's accumulators
// in the mma.sync m16n8 layout):
//   S^T = K_w Q^T                       wgmma m64 n(block_m), K and Q K-major in shared memory
//   P^T = exp2(logit2 - lse2)           the mods, as in the forward (detail::tile_probabilities)
//   dV += P^T dO                        wgmma m64 nD, P^T from registers, dO N-major
//   dP^T = V_w dO^T                     as S^T
//   dS^T = P^T (dP^T - delta)           (times d score_mod / d score; capture gradients scattered)
//   dK += dS^T Q                        as dV
//   dQ += dS K                          every warpgroup's dS^T stored swizzled (two buffers, by
//                                       the tile's parity), then read M-major (wgmma ss_mn) with K
//                                       N-major over all BN keys; each warpgroup makes its own 64
//                                       head-dim columns (D = 128; at D = 64 the warpgroups take
//                                       the tiles in turn), staged in shared memory and added to
//                                       dq_accum by the copy engine (one bulk reduce-add of 16 KB;
//                                       dq_accum in detail::DqBlockedLayout). Splitting by columns
//                                       rather than by keys halves the adds that reach L2.
// dK = scale * acc and dV are written at the end. Deterministic (kOrderedDq), the dQ adds go in
// kv tile order: the consumers wait for their turns (one staging buffer), or with several a thread
// of the producer warpgroup makes them instead (detail::write_ordered_dq).
//
// The generator wraps it as
//   extern "C" __global__ void __launch_bounds__(Cfg::kThreads, 1)
//   flexjit_bwd(const __grid_constant__ flexjit::BwdArgs args, const __grid_constant__ Mods::Params
//               params, const __grid_constant__ Mods::Grads grads,
//               const __grid_constant__ flexjit::BwdTmaMaps maps) {
//     flexjit::attention_bwd_sm90<Mods, Cfg, kScatter>(args, params, grads, maps);
//   }
// launched like the sm80 main kernel: ceil(Tkv / block_n) * Hkv * B CTAs in the order of
// bwd_kv_tile, Cfg::kThreads threads, Cfg::kSmemBytes of dynamic shared memory. args.Tq_pad is a
// multiple of block_m.
#pragma once

#include "common/attention_common.cuh"
#include "common/bwd_tile.cuh"
#include "common/mods_traits.cuh"
#include "common/online_softmax.cuh"
#include "common/tile_config.cuh"
#include "sm90/ptx.cuh"
#include "sm90/tiles.cuh"
#include "sm90/wgmma_ops.cuh"

namespace flexjit {

namespace detail {
// A warpgroup's 64 keys x 64 queries of P^T or dS^T, packed 16-bit in each warp's m16n8 layout
// (its keys 16 w .. + 16), stored as 64 rows of keys, 128 bytes of queries each, swizzled (chunk c
// of row r at chunk c ^ (r % 8)): wgmma reads it as a K-major A (rows = keys: dV, dK) and as an
// M-major A (dS with the queries as rows: dQ).
template <int KQ>
__device__ __forceinline__ void store_key_rows(unsigned base, const unsigned (&packed)[KQ][1][4], int warp_in_group,
                                               int g, int t) {
  static_assert(KQ == 4, "64 queries: one 128-byte row per key");
#pragma unroll
  for (int kq = 0; kq < KQ; ++kq)
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // the n8 tiles 2 kq and 2 kq + 1
      const int nt = 2 * kq + half;
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {  // keys g and g + 8 of the warp
        const int key = warp_in_group * 16 + g + hf * 8;
        sts_32(base + key * sm90::kSwizzleBytes + ((nt ^ (key & 7)) << 4) + 4 * t, packed[kq][0][2 * half + hf]);
      }
    }
}

// The CTA's keys: its kv tile's (batch, kv head) and keys [k0, k1) of BN (detail::bwd_kv_tile).
struct BwdCtaKeys {
  int n_block, hk, b, k0, k1;
};
template <int BN>
__device__ __forceinline__ BwdCtaKeys bwd_cta_keys(const BwdArgs& args) {
  const BwdKvTile tile = bwd_kv_tile(args);
  const int k0 = tile.n_block * BN;
  return {tile.n_block, tile.hk, tile.b, k0, min2(k0 + BN, args.Tkv)};
}

// One thread: the mbarriers of K/V and of the ring of S query tiles. kv_full and q_full(s) wait for
// the producer's one arrival (with its bytes), q_empty(s) for one arrival per consumer warp.
template <int S, int kConsumers, class QFull, class QEmpty>
__device__ __forceinline__ void init_q_ring(unsigned kv_full, const QFull& q_full, const QEmpty& q_empty) {
  sm90::mbarrier_init(kv_full, 1);
#pragma unroll
  for (int s = 0; s < S; ++s) {
    sm90::mbarrier_init(q_full(s), 1);
    sm90::mbarrier_init(q_empty(s), kConsumers * 4);
  }
}

// The producer's first loads: K and V of the CTA's BN keys (every 64-column block; V's DV columns
// are at most K's D) on kv_full, and the prefetch of the descriptors its query tiles load from.
template <int D, int BN, int DV = D>
__device__ __forceinline__ void load_kv_once(unsigned sK, unsigned sV, const BwdTmaMaps& maps, unsigned kv_full, int k0,
                                             int hk, int b) {
  static_assert(DV <= D, "V's column blocks are among K's");
  sm90::tma_prefetch_descriptor(&maps.q);
  sm90::tma_prefetch_descriptor(&maps.dout);
  sm90::mbarrier_arrive_expect_tx(kv_full, BN * (D + DV) * 2);
#pragma unroll
  for (int cb = 0; cb < D / 64; ++cb) {
    sm90::tma_load_4d(sK + cb * BN * sm90::kSwizzleBytes, &maps.k, kv_full, cb * 64, k0, hk, b);
    if (cb < DV / 64) sm90::tma_load_4d(sV + cb * BN * sm90::kSwizzleBytes, &maps.v, kv_full, cb * 64, k0, hk, b);
  }
}

// The CTA's query tiles (QTileSchedule) as they pass through a ring of S shared-memory slots:
// the i-th tile of the walk takes slot i % S, in that slot's (i / S)-th use, whose parity the
// slot's mbarriers wait for.
template <class Mods, int BM, int BN, int S, bool kDescending = false>
struct QTileRing : QTileSchedule<Mods, BM, BN, kDescending> {
  using QTileSchedule<Mods, BM, BN, kDescending>::QTileSchedule;
  int i = 0;  // the tile's place in the walk
  __device__ __forceinline__ void next() {
    this->pop();
    ++i;
  }
  __device__ __forceinline__ int slot() const { return i % S; }
  __device__ __forceinline__ unsigned parity() const { return (i / S) & 1; }
  __device__ __forceinline__ int q0() const { return this->tile() * BM; }  // the tile's first row
};

// The producer's walk: each tile's slot is refilled once the consumers have released its
// previous tile (q_empty), then `load(i, s, b, h, q0)` issues its copies (b, h: the tile's batch
// and query head). Returns the number of tiles walked.
template <class Mods, int BM, int BN, int S, bool kDescending, class QEmpty, class Load>
__device__ __forceinline__ int produce_q_tiles(const BwdArgs& args, const typename Mods::Params& p, int b, int hk,
                                               int k0, int k1, const QEmpty& q_empty, const Load& load) {
  QTileRing<Mods, BM, BN, S, kDescending> ring(args, p, b, hk, k0, k1);
#pragma unroll 1
  for (; ring.has_tile(); ring.next()) {
    if (ring.i >= S) sm90::mbarrier_wait(q_empty(ring.slot()), ring.parity() ^ 1);
    load(ring.i, ring.slot(), b, ring.head(), ring.q0());
  }
  return ring.i;
}

// A consumer thread's place: its warpgroup among the consumers (w), its lane and warp in the
// warpgroup, and its mma fragment coordinates (g: row, t: column pair).
struct ConsumerThread {
  int w, lane, warp_in_group, g, t;
};
__device__ __forceinline__ ConsumerThread consumer_thread(int tid, int warpgroup) {
  const int lane = tid & 31;
  return {warpgroup - 1, lane, (tid / 32) & 3, lane >> 2, lane & 3};
}

// The rows' lse2 and delta of the query tile at q0 of (b, h), by bulk copies on `full`. Both are
// padded to whole query tiles: BM floats from q0 always exist.
template <int BM>
__device__ __forceinline__ void load_row_stats(unsigned s_lse2, unsigned s_delta, const BwdArgs& args, int b, int h,
                                               int q0, unsigned full) {
  const i64 row = (static_cast<i64>(b) * args.Hq + h) * args.Tq_pad + q0;
  sm90::bulk_load(s_lse2, args.lse2 + row, BM * 4, full);
  sm90::bulk_load(s_delta, args.delta + row, BM * 4, full);
}

// Slot s of the ring (the narrow and split kernels; `layout` their shared memory from smem0): Q
// (D columns) and dO (DV <= D) of the query tile at q0 of (b, h) by TMA, its rows' lse2 and delta
// by bulk copies, all on the slot's q_full(s).
template <int D, int DV, int BM, class Layout, class QFull>
__device__ __forceinline__ void load_q_slot(const Layout& layout, unsigned smem0, int s, const QFull& q_full,
                                            const BwdTmaMaps& maps, const BwdArgs& args, int b, int h, int q0) {
  constexpr unsigned kRow = sm90::kSwizzleBytes;
  const unsigned sQ = smem0 + layout.q(s);
  sm90::mbarrier_arrive_expect_tx(q_full(s), BM * (D + DV) * 2 + 2 * BM * 4);
#pragma unroll
  for (int cb = 0; cb < D / 64; ++cb) {
    sm90::tma_load_4d(sQ + cb * BM * kRow, &maps.q, q_full(s), cb * 64, q0, h, b);
    if (cb < DV / 64)
      sm90::tma_load_4d(smem0 + layout.dout(s) + cb * BM * kRow, &maps.dout, q_full(s), cb * 64, q0, h, b);
  }
  load_row_stats<BM>(smem0 + layout.lse2(s), smem0 + layout.delta(s), args, b, h, q0, q_full(s));
}

// acc = rows^T cols over the head dim D: 64 keys (rows of K or V, BN rows per 64-column block)
// against the tile's BM queries (Q or dO), both K-major; issued and committed, not waited for.
template <bool kBf16, int D, int BM, int BN>
__device__ __forceinline__ void transposed_product(float (&acc)[BM / 8][4], unsigned rows, unsigned cols) {
  constexpr unsigned kRow = sm90::kSwizzleBytes;
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const unsigned column = kk / 4, within = (kk % 4) * 32u;
    const unsigned long long a = sm90::smem_descriptor(rows + column * BN * kRow + within, 16, 1024);
    const unsigned long long bq = sm90::smem_descriptor(cols + column * BM * kRow + within, 16, 1024);
    sm90::Wgmma<BM>::template ss<kBf16>(acc, a, bq, kk > 0);
  }
  sm90::wgmma_commit();
}

// dq = dS K for 64 queries x 64 head-dim columns over the CTA's BN keys: A = dS^T read M-major,
// keys 64 w .. + 64 from consumer w's buffer `ds(w)` (store_key_rows' layout), B = one 64-column
// block of K at `k_block` (BN rows), N-major. Issued and committed, not waited for.
template <bool kBf16, int BN, class DsBuffer>
__device__ __forceinline__ void dq_block_product(float (&dq)[8][4], const DsBuffer& ds, unsigned k_block) {
  constexpr unsigned kRow = sm90::kSwizzleBytes;
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) {  // k16 steps over the keys
    const unsigned long long a = sm90::smem_descriptor(ds(kk / 4) + (kk % 4) * 16 * kRow, 64 * kRow, 1024);
    const unsigned long long bk = sm90::smem_descriptor(k_block + kk * 16 * kRow, BN * kRow, 1024);
    sm90::Wgmma<64>::template ss_mn<kBf16>(dq, a, bk, kk > 0);
  }
  sm90::wgmma_commit();
}

// A warpgroup's 64 queries x 64 columns of dQ (rows warp_row, warp_row + 8 of each thread) to a
// staging buffer, swizzled as dq_accum's blocks are (detail::DqBlockedLayout); add_dq_block then
// adds it to `dst` by one bulk reduce-add of the leader. The buffer must be free (its previous add
// read).
__device__ __forceinline__ void stage_dq_block(unsigned staging, const float (&dq)[8][4], int warp_row, int t) {
#pragma unroll
  for (int nd = 0; nd < 8; ++nd)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {  // queries g and g + 8 of the warp
      const int row = warp_row + hf * 8;
      sts_64(staging + 4 * DqBlockedLayout::index(row, nd * 8 + 2 * t), dq[nd][2 * hf], dq[nd][2 * hf + 1]);
    }
}
__device__ __forceinline__ void add_dq_block(unsigned staging, const float (&dq)[8][4], int warp_row, int t,
                                             int barrier, bool leader, float* dst) {
  stage_dq_block(staging, dq, warp_row, t);
  sm90::fence_async_shared();
  sm90::named_barrier_sync(barrier, 128);
  if (leader) sm90::bulk_reduce_add_f32(dst, staging, DqBlockedLayout::kBlockFloats * 4);
}

// The 64-key kernels (wide and split forms): block cb of a warpgroup's dQ for one query tile,
// dS K over the CTA's 64 keys (dS^T at sDS, K's blocks at sK), staged in the warpgroup's buffer
// and added to the tile's block of dq_accum (dq_tile). After the product of the warpgroup's first
// block of the tile (`first`), whose wait also covers its other products, each warp releases the
// tile's slot (q_empty) and, deterministic, warp 0 waits for every lower kv tile's kConsumers
// passes (Turns, at `turns`).
struct DqBlockThread {
  const BwdArgs& args;
  int b, h, n_block, q_tile;  // the query tile's place, and the CTA's kv tile
  int w, lane, warp_in_group, t, warp_row;
  bool leader;
};
template <bool kBf16, int BN, int kConsumers, bool kOrderedDq, class Turns, class Params>
__device__ __forceinline__ void add_dq_column_block(const DqBlockThread& me, const Params& p, int cb, bool first,
                                                    unsigned sDS, unsigned sK, unsigned staging, unsigned q_empty,
                                                    int* turns, float* dq_tile) {
  float dq[8][4];
  dq_block_product<kBf16, BN>(dq, [&](int) { return sDS; }, sK + cb * BN * sm90::kSwizzleBytes);
  sm90::wgmma_wait<0>();
  if (first) {
    __syncwarp();  // the warp's reads of lse2 and delta come before its arrival releases the slot
    if (me.lane == 0) sm90::mbarrier_arrive(q_empty);
    if (kOrderedDq && me.warp_in_group == 0) {
      const int turn = Turns::turn(me.args, p, me.b, me.h, me.n_block, me.q_tile);
      if (me.lane == 0) Turns::wait(turns, kConsumers * turn);
    }
  }
  // The staging buffer is rewritten once the copy engine has read its previous block.
  if (me.leader) sm90::bulk_wait_read<0>();
  sm90::named_barrier_sync(1 + me.w, 128);
  add_dq_block(staging, dq, me.warp_row, me.t, 1 + me.w, me.leader, dq_tile + cb * DqBlockedLayout::kBlockFloats);
}

// Deterministic dQ: the leader's adds have landed (completed, then ordered) before it passes the
// turn to the next kv tile (Turns: DqTurns). The kernels pass a tile's turn part-way through the
// next tile's products, so that the add completes under them instead of stalling the warpgroup;
// `turns` is null before the first tile.
template <class Turns>
__device__ __forceinline__ void pass_dq_turn(int* turns, bool leader) {
  if (leader && turns != nullptr) {
    sm90::bulk_wait<0>();
    sm90::fence_async_global();
    __threadfence();
    Turns::pass(turns);
  }
}
// The narrow kernel's dQ blocks of its walk's i-th query tile: consumer w makes one at D = 128;
// at D = 64 the warpgroups take the tiles in turn. `use` counts w's blocks before this one, and
// the tile's first block (consumer dq_record_owner) carries the tile's record for the writer.
template <int D>
__device__ __forceinline__ bool makes_dq_block(int i, int w) {
  return D == 128 || ((i + w) & 1) == 0;
}
template <int D>
__device__ __forceinline__ int dq_block_use(int i) {
  return D == 128 ? i : i / 2;
}
template <int D>
__device__ __forceinline__ int dq_record_owner(int i) {
  return D == 128 ? 0 : i & 1;
}

// Deterministic dQ (the narrow kernel's kOrderedDq form): one thread of the producer warpgroup
// adds the dQ blocks the consumers stage (dq_full), each query tile's once the kv tiles below this
// one that reach it have added theirs (detail::DqTurns: one pass per CTA and tile), and frees the
// staging buffers (dq_empty) once the copy engine has read them. The consumers never wait for
// another CTA: with kBuffers buffers each they run up to that many tiles ahead of the writer, so a
// late turn up the chain of kv tiles is absorbed instead of passed down. The tile's record (its
// span of the accumulator, its counter and its turn: written by the block's owner, which has the
// registers to count the turn; the writer has the producer warpgroup's few) says what to add
// where. The producer tells the walk's length once its own walk has ended (walk_end): the writer
// stops at the first tile past it. (A record of the end in the next staging buffer would need the
// producer to wait for that buffer's release, many phases ahead of it: an mbarrier's parity
// cannot tell those phases apart.)
struct DqRecord {
  float* dq_tile;  // the query tile's span of the accumulator
  int* turns;      // its counter
  int turn;        // the passes to wait for
};
template <class Layout>
__device__ __forceinline__ void store_dq_record(unsigned smem0, const Layout& layout, int w, int buffer,
                                                const DqRecord& r) {
  const unsigned at = smem0 + layout.dq_record(w, buffer);
  sm90::sts_ptr(at, r.dq_tile);
  sm90::sts_ptr(at + 8, r.turns);
  sm90::sts_s32(at + 16, r.turn);
}

// How long the writer sleeps on a block before it looks whether the walk has ended: at most that
// late, once a CTA, past the last tile.
constexpr unsigned kWriterEndPollNs = 1000;

template <int D, int kConsumers, int kBuffers, class Turns, class Layout>
__device__ __forceinline__ void write_ordered_dq(unsigned smem0, const Layout& layout) {
#pragma unroll 1
  for (int i = 0;; ++i) {
    const int use = dq_block_use<D>(i), buffer = use % kBuffers, owner = dq_record_owner<D>(i);
    const unsigned parity = (use / kBuffers) & 1;
    // Tile i's record, unless the walk has ended before it. The writer sleeps on dq_full alone,
    // which wakes it as the block lands, and only tests walk_end: asleep on walk_end, which
    // completes once a CTA, it would miss dq_full's completion for the hardware's time limit.
    while (!sm90::mbarrier_try(smem0 + layout.dq_full(owner, buffer), parity, kWriterEndPollNs))
      if (sm90::mbarrier_test(smem0 + layout.walk_end(), 0) && sm90::lds_s32(smem0 + layout.walk_tiles()) <= i) return;
    const unsigned record = smem0 + layout.dq_record(owner, buffer);
    float* dq_tile = sm90::lds_ptr<float>(record);
    int* turns = sm90::lds_ptr<int>(record + 8);
    Turns::wait(turns, sm90::lds_s32(record + 16));
#pragma unroll
    for (int w = 0; w < kConsumers; ++w)
      if (makes_dq_block<D>(i, w)) {
        if (w != owner) sm90::mbarrier_wait(smem0 + layout.dq_full(w, buffer), parity);
        sm90::bulk_reduce_add_f32(dq_tile + (D == 128 ? w : 0) * DqBlockedLayout::kBlockFloats,
                                  smem0 + layout.dq(w, buffer), DqBlockedLayout::kBlockFloats * 4);
      }
    sm90::bulk_wait_read<0>();
#pragma unroll
    for (int w = 0; w < kConsumers; ++w)
      if (makes_dq_block<D>(i, w)) sm90::mbarrier_arrive(smem0 + layout.dq_empty(w, buffer));
    pass_dq_turn<Turns>(turns, true);
  }
}

// The staging buffer of consumer w's block of the walk's i-th tile, once the writer has freed it
// (the phase right after the one this consumer waited for last: parity is enough).
template <int D, int kBuffers, class Layout>
__device__ __forceinline__ int wait_dq_buffer(unsigned smem0, const Layout& layout, int i, int w) {
  const int use = dq_block_use<D>(i), buffer = use % kBuffers;
  if (use >= kBuffers) sm90::mbarrier_wait(smem0 + layout.dq_empty(w, buffer), (use / kBuffers - 1) & 1);
  return buffer;
}

// The producer thread, after its walk of `tiles` tiles: their number, for the writer.
template <class Layout>
__device__ __forceinline__ void end_ordered_dq(unsigned smem0, const Layout& layout, int tiles) {
  sm90::sts_s32(smem0 + layout.walk_tiles(), tiles);
  sm90::mbarrier_arrive(smem0 + layout.walk_end());  // releases the count
}
}  // namespace detail

// kDqBuffers_: dQ staging buffers per consumer: 1, or (the deterministic kernel's writer thread)
// sm90::kBwdOrderedDqBuffers. kProducerRegisters_: the producer warpgroup's registers a thread,
// 24, or 32 where the producer's walk does not fit 24 beside the writer (the consumers' share
// follows).
template <int kHeadDim_, int kBlockM_, int kBlockN_, int kStages_, class Element_, int kDqBuffers_ = 1,
          int kProducerRegisters_ = sm90::kBwdProducerRegisters>
struct Sm90BwdConfig : TileConfigBase<kHeadDim_, kBlockM_, kBlockN_, kStages_, Element_> {
  static constexpr int kConsumers = kBlockN_ / 64;  // consumer warpgroups, 64 keys each
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kDqBuffers = kDqBuffers_;
  static constexpr int kSmemBytes = sm90::bwd_smem_bytes(kHeadDim_, kBlockM_, kBlockN_, kStages_, kDqBuffers_);
  static_assert(kSmemBytes <= sm90::kSmemPerCtaBytes, "the backward's shared memory");
  static constexpr int kProducerRegisters = kProducerRegisters_;
  static constexpr int kConsumerRegisters = sm90::consumer_registers(kConsumers, kProducerRegisters, 1);
  static constexpr bool kDqBlocked = true;
};

template <class Mods, class Cfg, bool kScatter, bool kOrderedDq = false>
__device__ __forceinline__ void attention_bwd_sm90(const BwdArgs& args, const typename Mods::Params& p,
                                                   const typename Mods::Grads& grads, const BwdTmaMaps& maps) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int BM = Cfg::kBlockM;
  constexpr int BN = Cfg::kBlockN;
  constexpr int S = Cfg::kStages;
  constexpr bool kBf16 = Cfg::kIsBf16;
  using Steps = detail::BwdSteps<D, BM>;
  constexpr int NQ = Steps::NQ, KQ = Steps::KQ, ND = Steps::ND;
  constexpr unsigned kRow = sm90::kSwizzleBytes;  // one swizzled row of a 64-column block
  constexpr bool kSlope = Mods::kHasScoreMod && !Mods::kScoreSlopeConstant;
  static_assert(BM == 64, "one 64-query block per dS^T row (the swizzle atom)");
  static_assert(BN == 128, "two consumer warpgroups of 64 keys");
  static_assert(D == 64 || D == 128, "head dim 64 or 128: one dQ column block per warpgroup, or one in turn");
  static_assert(sizeof(typename Cfg::Element) == 2, "16-bit elements only");

  extern __shared__ __align__(1024) unsigned char flexjit_smem[];
  const unsigned smem0 = (smem_u32(flexjit_smem) + sm90::kTileAlign - 1) & ~unsigned(sm90::kTileAlign - 1);
  constexpr int kDqBuffers = Cfg::kDqBuffers;
  // Deterministic dQ through the writer thread (several staging buffers), or in the consumers.
  constexpr bool kWriter = kOrderedDq && kDqBuffers > 1;
  static_assert(kOrderedDq || kDqBuffers == 1, "the default kernel adds from one staging buffer");
  constexpr sm90::BwdSmemLayout kSmem(D, BM, BN, S, kDqBuffers);
  const unsigned sK = smem0 + kSmem.k(), sV = smem0 + kSmem.v();
  const unsigned kv_full = smem0 + kSmem.kv_full();
  auto q_full = [&](int s) { return smem0 + kSmem.q_full(s); };
  auto q_empty = [&](int s) { return smem0 + kSmem.q_empty(s); };

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const auto [n_block, hk, b, k0, k1] = detail::bwd_cta_keys<BN>(args);
  const int Tkv = args.Tkv;

  if (tid == 0) {
    detail::init_q_ring<S, Cfg::kConsumers>(kv_full, q_full, q_empty);
    if constexpr (kWriter) {
      for (int w = 0; w < Cfg::kConsumers; ++w)
        for (int buffer = 0; buffer < kDqBuffers; ++buffer) {
          sm90::mbarrier_init(smem0 + kSmem.dq_full(w, buffer), 4);  // one arrival per consumer warp
          sm90::mbarrier_init(smem0 + kSmem.dq_empty(w, buffer), 1);
        }
      sm90::mbarrier_init(smem0 + kSmem.walk_end(), 1);
    }
    sm90::mbarrier_init_fence();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer (and dQ writer)
    sm90::registers_release<Cfg::kProducerRegisters>();
    if constexpr (kWriter) {
      if (tid == 32) {
        detail::write_ordered_dq<D, Cfg::kConsumers, kDqBuffers, detail::DqTurns<Mods, BM, BN>>(smem0, kSmem);
        return;
      }
    }
    if (tid != 0) return;
    detail::load_kv_once<D, BN>(sK, sV, maps, kv_full, k0, hk, b);
    const int tiles = detail::produce_q_tiles<Mods, BM, BN, S, kOrderedDq>(
        args, p, b, hk, k0, k1, q_empty,
        [&](int, int s, int b, int h, int q0) { detail::load_q_slot<D, D, BM>(kSmem, smem0, s, q_full, maps, args, b, h, q0); });
    if constexpr (kWriter) detail::end_ordered_dq(smem0, kSmem, tiles);
    return;
  }

  // ------------------------------------------------------------------ consumers
  sm90::registers_claim<Cfg::kConsumerRegisters>();
  const auto [w, lane, warp_in_group, g, t] = detail::consumer_thread(tid, warpgroup);
  const int key_row0 = k0 + w * 64 + warp_in_group * 16 + g;  // this thread's keys: key_row0, key_row0 + 8
  const unsigned sKw = sK + w * 64 * kRow;  // this warpgroup's 64 rows of K and V (in each column block)
  const unsigned sVw = sV + w * 64 * kRow;
  const bool dq_leader = (tid & 127) == 0;  // issues and waits for the warpgroup's bulk dQ adds
  const bool kv_edge = k0 + BN > Tkv;
  constexpr int kDsBarrier = 1 + Cfg::kConsumers;  // after 1 + w, each warpgroup's own

  // acc += A B: A the warpgroup's 64 keys x the tile's queries from registers (P^T or dS^T,
  // packed), B the tile's rows at `cols` (dO or Q, N-major); issued and committed, not waited for.
  auto product_from_registers = [&](float(&acc)[ND][4], const unsigned(&a)[KQ][1][4], unsigned cols) {
    sm90::wgmma_fence();
#pragma unroll
    for (int kq = 0; kq < KQ; ++kq)
      sm90::Wgmma<D>::template rs<kBf16>(acc, a[kq][0], sm90::smem_descriptor(cols + kq * 16 * kRow, BM * kRow, 1024), 1);
    sm90::wgmma_commit();
  };

  float dk[ND][4], dv[ND][4];
  detail::zero_fragments(dk);
  detail::zero_fragments(dv);
  sm90::mbarrier_wait(kv_full, 0);
  // Deterministic dQ in the consumers (one staging buffer): the kv tiles below this one that reach a
  // query tile add first (detail::DqTurns). The warpgroups of a CTA add disjoint column blocks, so
  // they go together once every lower kv tile's kConsumers passes are in; each passes (whether or
  // not it added) once its add has landed, during the next tile (pending: that tile's counter).
  using Turns = detail::DqTurns<Mods, BM, BN>;
  int* pending = nullptr;

#pragma unroll 1
  for (detail::QTileRing<Mods, BM, BN, S, kOrderedDq> ring(args, p, b, hk, k0, k1); ring.has_tile(); ring.next()) {
    const int s = ring.slot(), h = ring.head(), q0 = ring.q0(), cls = ring.tile_class();
    const unsigned sQ = smem0 + kSmem.q(s);
    const unsigned sdO = smem0 + kSmem.dout(s);
    const unsigned sLse2 = smem0 + kSmem.lse2(s);
    const unsigned sDelta = smem0 + kSmem.delta(s);
    const typename detail::CtaOf<Mods>::type cta = detail::CtaOf<Mods>::make(p, b, h);
    sm90::mbarrier_wait(q_full(s), ring.parity());

    // ---- S^T = K_w Q^T (rows: this warpgroup's keys; both operands K-major).
    float sacc[NQ][4];
    detail::transposed_product<kBf16, D, BM, BN>(sacc, sKw, sQ);
    sm90::wgmma_wait<0>();

    // ---- P^T (and the slope, or the scores for the scatter), in the dP^T registers until dP^T.
    float dpacc[NQ][4];
    float xs[kScatter ? NQ : 1][4];
    const bool edge = kv_edge || q0 + BM > args.Tq;
    detail::tile_probabilities<Mods, kSlope && !kScatter, kScatter>(sacc, dpacc, xs, cta, args, b, h, key_row0,
                                                                   q0 + 2 * t, sLse2 + 2 * t * 4, cls, edge);

    // ---- dV += P^T dO (P^T from registers, dO N-major).
    unsigned pa[KQ][1][4];
    detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), pa);
    product_from_registers(dv, pa, sdO);
    // P^T's registers are free once dV's product has read them: without this wait they stay live
    // through dP^T's product beside the slope (or the scores of the scatter), and ptxas spills
    // (soft-capping score mods).
    if constexpr (kSlope || kScatter) sm90::wgmma_wait<0>();
    if constexpr (kSlope && !kScatter) {
#pragma unroll
      for (int nt = 0; nt < NQ; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) sacc[nt][e] *= dpacc[nt][e];
    }

    // ---- dP^T = V_w dO^T.
    detail::transposed_product<kBf16, D, BM, BN>(dpacc, sVw, sdO);
    sm90::wgmma_wait<0>();

    // ---- dS^T = P^T (dP^T - delta), times the slope: in sacc.
    detail::transposed_ds<Mods, kScatter, kSlope>(sacc, dpacc, xs, cta, grads, sDelta, b, h, key_row0, q0, t);

    // ---- dK += dS^T Q; dS^T to shared memory for dQ (row = key, 64 queries of 128 bytes, swizzled
    // as the wgmma reads an M-major operand: chunk c of row r at chunk c ^ (r % 8)).
    unsigned da[KQ][1][4];
    detail::pack_probabilities<kBf16>(reinterpret_cast<float(&)[1][NQ][4]>(sacc), da);
    product_from_registers(dk, da, sQ);
    const int buffer = ring.i & 1;
    detail::store_key_rows(smem0 + kSmem.ds(w, buffer), da, warp_in_group, g, t);
    // The previous tile's dQ add must have read the staging buffer before it is rewritten (a whole
    // tile's products after it was issued: the wait rarely waits). Deterministic: it must have
    // landed, and its turn passes now; or the writer thread adds, and frees its buffers itself.
    if constexpr (kOrderedDq && !kWriter) detail::pass_dq_turn<Turns>(pending, dq_leader);
    else if (!kOrderedDq && dq_leader) sm90::bulk_wait_read<0>();
    sm90::fence_async_shared();
    // Every consumer's dS^T is complete. A warpgroup reaches this barrier only after its previous
    // tile's dQ product has read the other buffers, so each is rewritten two tiles after it is read.
    sm90::named_barrier_sync(kDsBarrier, Cfg::kConsumers * 128);

    // ---- dQ += dS K: this warpgroup's 64 head-dim columns (D = 64: the one block, every other
    // tile), staged and added to the query tile's span of dq_accum.
    const bool makes_dq = detail::makes_dq_block<D>(ring.i, w);  // a compile-time true at D = 128
    const int cb = D == 128 ? w : 0;
    float dq[8][4];
    if (makes_dq)
      detail::dq_block_product<kBf16, BN>(dq, [&](int c) { return smem0 + kSmem.ds(c, buffer); }, sK + cb * BN * kRow);
    sm90::wgmma_wait<0>();  // also dK's product: Q, lse2 and delta are free
    __syncwarp();  // the warp's reads of lse2 and delta come before its arrival releases the slot
    if (lane == 0) sm90::mbarrier_arrive(q_empty(s));
    float* dq_tile = (kOrderedDq ? Turns::accum(args, n_block) : args.dq_accum) +
                     ((static_cast<i64>(b) * args.Hq + h) * args.Tq_pad + q0) * D;
    int* turns = kOrderedDq ? Turns::counter(args, b, h, q0 / BM, n_block) : nullptr;
    if constexpr (kWriter) {
      // Handed to the writer (detail::write_ordered_dq) in the next of this warpgroup's staging
      // buffers, once the writer has freed it.
      if (makes_dq) {
        const int buffer = detail::wait_dq_buffer<D, kDqBuffers>(smem0, kSmem, ring.i, w);
        detail::stage_dq_block(smem0 + kSmem.dq(w, buffer), dq, warp_in_group * 16 + g, t);
        sm90::fence_async_shared();
        if (w == detail::dq_record_owner<D>(ring.i) && warp_in_group == 0) {
          const int turn = Turns::turn(args, p, b, h, n_block, q0 / BM);  // warp-collective
          if (lane == 0) detail::store_dq_record(smem0, kSmem, w, buffer, {dq_tile, turns, turn});
        }
        __syncwarp();
        if (lane == 0) sm90::mbarrier_arrive(smem0 + kSmem.dq_full(w, buffer));
      }
    } else {
      if constexpr (kOrderedDq) {
        if (warp_in_group == 0) {
          const int turn = Turns::turn(args, p, b, h, n_block, q0 / BM);
          if (lane == 0) Turns::wait(turns, Cfg::kConsumers * turn);
        }
        sm90::named_barrier_sync(1 + w, 128);
      }
      if (makes_dq)
        detail::add_dq_block(smem0 + kSmem.dq(w), dq, warp_in_group * 16 + g, t, 1 + w, dq_leader,
                             dq_tile + cb * detail::DqBlockedLayout::kBlockFloats);
      pending = turns;
    }
  }
  if constexpr (kOrderedDq && !kWriter) detail::pass_dq_turn<Turns>(pending, dq_leader);  // the last tile's
  // Shared memory stays the CTA's until its last bulk add has read it (deterministic: the writer
  // waits for its own).
  if (!kWriter && dq_leader) sm90::bulk_wait<0>();

  // ---- epilogue: dK = scale * acc, dV, in the element type (rows past Tkv are not written).
  detail::store_dk_dv<kBf16>(args, dk, dv, b, hk, key_row0, t);
}

}  // namespace flexjit

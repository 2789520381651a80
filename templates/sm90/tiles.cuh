// flexjit: the sm90 forward family's tile table and shared-memory formula, the one copy for the
// host (codegen/sm90_fwd) and the kernel (templates/sm90/attention_fwd.cuh).
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

// The shared-memory layout's offsets are taken at run time by the kernel too: device functions
// under nvcc and NVRTC, plain constexpr functions under g++.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FJ_SM90_TILES_FN __host__ __device__
#else
#define FJ_SM90_TILES_FN
#endif

namespace flexjit {
namespace sm90 {

struct FwdTile {
  int block_m;      // query rows per CTA: 64 per consumer warpgroup
  int block_n;      // keys per K/V tile (the N of the QK^T wgmma)
  int stages;       // depth of the K/V ring
  bool persistent;  // one wave of CTAs taking query tiles in turn
};

// Head dims the family serves (the N of the PV wgmma, in 64-column swizzle blocks): one head dim
// for q, k and v, or multi-head latent attention's q and k of 192 with v and out of 128.
constexpr bool serves_head_dim(int head_dim) { return head_dim == 64 || head_dim == 128 || head_dim == 256; }
constexpr bool serves_head_dims(int head_dim, int head_dim_v) {
  return head_dim_v == head_dim ? serves_head_dim(head_dim) : head_dim == 192 && head_dim_v == 128;
}

// The shipped tile per head dim (64 query rows per consumer warpgroup):
//   D = 64 : 192 x 128, 4 stages.  Q 24 KB + K, V 4 x 32 KB = 152 KB. Three consumers: at this
//            head dim the softmax outlasts the products, so two warpgroups' softmax hide under
//            the third's products.
//   D = 128: 128 x 128, 3 stages.  Q 32 KB + K, V 3 x 64 KB = 224 KB (a third stage measured
//            +4% dense, +8% causal, +6% prefix LM over two: bench/NOTES.md).
//   D = 256: 128 x 64, 2 stages.   Q 64 KB + K, V 2 x 64 KB = 192 KB (O alone is 128 registers).
// D = 128 runs a persistent grid: the next tile's Q and K/V load under this one's last products
// and epilogue (up to +14% over one CTA per tile, most on short kv loops: bench/NOTES.md), except
// for masks that follow a tile map (codegen/sm90_fwd/tiles.cpp); at D = 64 the 192-row tile has
// no registers to spare for it (it measured up to 10% slower).
//   D = 192, Dv = 128: 128 x 128, 2 stages.  Q 48 KB + K 2 x 48 KB + V 2 x 32 KB = 208 KB; O as
//            at D = 128, S as at D = 128 over 12 k-steps.
constexpr FwdTile default_fwd_tile(int head_dim, int head_dim_v) {
  return head_dim_v != head_dim ? FwdTile{128, 128, 2, false}
         : head_dim <= 64       ? FwdTile{192, 128, 4, false}
         : head_dim <= 128      ? FwdTile{128, 128, 3, true}
                                : FwdTile{128, 64, 2, false};
}
constexpr FwdTile default_fwd_tile(int head_dim) { return default_fwd_tile(head_dim, head_dim); }

// FP8 E4M3 q, k and v (e4m3_t): head dims 128 and 256, one for q, k and v (a 128-byte swizzle
// row holds 128 elements, so a smaller head dim would need another swizzle). Keys come in tiles
// of 128, one swizzle row of v transposed (sm90/fp8.cuh), with half the bytes of a 16-bit tile,
// or of 64 (a 64-byte swizzle row) where 128 spills (codegen/sm90_fwd/tiles.cpp):
//   D = 128: 128 x 128, 4 stages.  Q 16 KB + K, V 4 x 32 KB = 144 KB.
//   D = 256: 128 x 128, 2 stages.  Q 32 KB + K, V 2 x 64 KB = 160 KB.
constexpr bool serves_fp8_head_dims(int head_dim, int head_dim_v) {
  return head_dim_v == head_dim && (head_dim == 128 || head_dim == 256);
}
constexpr FwdTile default_fp8_fwd_tile(int head_dim) {
  return head_dim <= 128 ? FwdTile{128, 128, 4, false} : FwdTile{128, 128, 2, false};
}
// The pre-pass that transposes v for the FP8 forward (sm90/fp8.cuh): a CTA of this many threads
// per kFp8TransposeKeys keys of one (b, kv head); keys are reordered within groups of
// kFp8KeyGroup, so v transposed has rows of Tkv rounded up to a whole group.
constexpr int kFp8TransposeThreads = 256;
constexpr int kFp8TransposeKeys = 64;
constexpr int kFp8KeyGroup = 16;

// A tile for programs whose block-sparse blocks (q_block rows) the default tile does not divide:
// the same kv tile with 128 query rows, when that divides them.
constexpr FwdTile fwd_tile_for_blocks(int head_dim, int head_dim_v, int q_block) {
  const FwdTile d = default_fwd_tile(head_dim, head_dim_v);
  return q_block % d.block_m != 0 && q_block % 128 == 0 ? FwdTile{128, d.block_n, d.stages, d.persistent} : d;
}

constexpr int kSmemPerSmBytes = 228 * 1024;  // shared memory of one SM
constexpr int kSmemReservedBytes = 1024;     // reserved by the system per resident CTA
constexpr int kSmemPerCtaBytes = kSmemPerSmBytes - kSmemReservedBytes;  // the most a CTA may opt into

// CTAs resident on one SM: two for a tile with one consumer warpgroup whose shared memory fits
// twice (one CTA's prologue and epilogue then run under the other's products), else one.
constexpr int fwd_ctas_per_sm(int consumers, int smem_bytes) {
  return consumers == 1 && 2 * (smem_bytes + kSmemReservedBytes) <= kSmemPerSmBytes ? 2 : 1;
}

// Registers a thread is launched with: this CTA's part of the 64K over its threads, a multiple
// of 8, at most 255 (ptxas allocates that much for a kernel that reallocates with setmaxnreg).
constexpr int launch_registers(int consumers, int ctas_per_sm) {
  const int share = 65536 / (ctas_per_sm * 128 * (consumers + 1));
  return (share < 255 ? share : 255) & ~7;
}

// Registers per consumer thread after the producer warpgroup drops to `producer` registers: an
// equal share of what the CTA was launched with, a multiple of 8, at most 240. Never more:
// setmaxnreg.inc waits for registers the other warpgroups gave back, and would wait forever.
constexpr int consumer_registers(int consumers, int producer, int ctas_per_sm) {
  const int share = ((launch_registers(consumers, ctas_per_sm) * (consumers + 1) - producer) / consumers) & ~7;
  return share < 240 ? share : 240;
}

constexpr int kSwizzleBytes = 128;  // TMA / wgmma 128-byte swizzle: 64 16-bit columns per block
constexpr int kTileAlign = 1024;    // a swizzled tile starts on a 1024-byte boundary

// Bytes of one [rows x D] tile of element_bytes elements (D * element_bytes / 128 column blocks
// of rows x 128 bytes). The FP8 forward's V is transposed: Dv rows of block_n keys, as many bytes.
FJ_SM90_TILES_FN constexpr int fwd_tile_bytes(int rows, int head_dim, int element_bytes = 2) {
  return rows * head_dim * element_bytes;
}

// The forward's shared memory, in bytes from the CTA's 1024-byte aligned start: the one copy of
// the kernel's offsets and of the host's size.
//   Q (block_m rows), the K ring, the V ring (stages tiles of block_n rows each; V's of
//   head_dim_v columns);
//   the mbarriers, 8 bytes each: Q full; K full, V full and K/V empty per stage; Q empty and one
//   full barrier per tile slot (these three used by the persistent grid only);
//   two int tile slots (the persistent grid's query tiles, written by the producer).
struct FwdSmemLayout {
  int q_bytes, k_bytes, v_bytes, stages;
  FJ_SM90_TILES_FN constexpr FwdSmemLayout(int head_dim, int block_m, int block_n, int stages_, int head_dim_v,
                                           int element_bytes = 2)
      : q_bytes(fwd_tile_bytes(block_m, head_dim, element_bytes)),
        k_bytes(fwd_tile_bytes(block_n, head_dim, element_bytes)),
        v_bytes(fwd_tile_bytes(block_n, head_dim_v, element_bytes)), stages(stages_) {}
  FJ_SM90_TILES_FN constexpr FwdSmemLayout(int head_dim, int block_m, int block_n, int stages_)
      : FwdSmemLayout(head_dim, block_m, block_n, stages_, head_dim) {}

  FJ_SM90_TILES_FN constexpr int q() const { return 0; }
  FJ_SM90_TILES_FN constexpr int k(int s) const { return q_bytes + s * k_bytes; }
  FJ_SM90_TILES_FN constexpr int v(int s) const { return q_bytes + stages * k_bytes + s * v_bytes; }
  FJ_SM90_TILES_FN constexpr int q_full() const { return barrier(0); }
  FJ_SM90_TILES_FN constexpr int k_full(int s) const { return barrier(1 + s); }
  FJ_SM90_TILES_FN constexpr int v_full(int s) const { return barrier(1 + stages + s); }
  FJ_SM90_TILES_FN constexpr int kv_empty(int s) const { return barrier(1 + 2 * stages + s); }
  FJ_SM90_TILES_FN constexpr int q_empty() const { return barrier(1 + 3 * stages); }
  FJ_SM90_TILES_FN constexpr int tile_full(int j) const { return barrier(2 + 3 * stages + (j & 1)); }
  FJ_SM90_TILES_FN constexpr int tile_slot(int j) const { return barrier(4 + 3 * stages) + 4 * (j & 1); }
  // The bytes used, and those to allocate: the slack lets the start be aligned to 1024 bytes.
  FJ_SM90_TILES_FN constexpr int end() const { return tile_slot(0) + 2 * 4; }
  FJ_SM90_TILES_FN constexpr int bytes() const { return end() + kTileAlign; }

 private:
  FJ_SM90_TILES_FN constexpr int barrier(int i) const { return q_bytes + stages * (k_bytes + v_bytes) + 8 * i; }
};

// The mbarriers and tile slots alone (the layout of no tiles).
constexpr int fwd_barrier_bytes(int stages) { return FwdSmemLayout(0, 0, 0, stages).end(); }
// Dynamic shared memory of one CTA.
constexpr int fwd_smem_bytes(int head_dim, int block_m, int block_n, int stages, int head_dim_v,
                             int element_bytes = 2) {
  return FwdSmemLayout(head_dim, block_m, block_n, stages, head_dim_v, element_bytes).bytes();
}
constexpr int fwd_smem_bytes(int head_dim, int block_m, int block_n, int stages) {
  return fwd_smem_bytes(head_dim, block_m, block_n, stages, head_dim);
}

// A backward stage's row statistics (lse2 and delta, block_m floats each), padded to a whole
// 1024-byte block so that the stage's tiles stay aligned.
FJ_SM90_TILES_FN constexpr int bwd_row_stats_bytes(int block_m) {
  return ((8 * block_m + kTileAlign - 1) / kTileAlign) * kTileAlign;
}

// The deterministic backward's dQ staging buffers per consumer warpgroup (templates/sm90/
// attention_bwd.cuh). With several, a consumer hands a tile's dQ block to the writer thread
// (detail::write_ordered_dq) and goes on, stalling only when the writer still holds every buffer
// (their adds wait for other CTAs' turns); with one (compiler::OrderedDqForm::Consumers, where
// ptxas spills the writer's forms), the consumers wait for the turns and add themselves, as the
// default kernel adds.
constexpr int kBwdOrderedDqBuffers = 2;

// The backward's producer warpgroup's registers a thread, and the consumers get the rest of the
// launch's (consumer_registers): 24 (240 a consumer thread), or 32 in the writer's wide-producer
// form (232), where the producer's walk spills at 24 beside the writer: ptxas keeps the producer
// thread's state in uniform registers only when no branch of another warp of its warpgroup precedes
// it, and the writer's is such a branch (windows: 1.17x the consumers' order's backward on an
// H100, sinks 1.33x).
constexpr int kBwdProducerRegisters = 24;
constexpr int kBwdWideProducerRegisters = 32;

// The backward's shared memory (templates/sm90/attention_bwd.cuh), from the CTA's 1024-byte
// aligned start:
//   K and V of the CTA's block_n keys, loaded once;
//   per stage: Q and dO (block_m rows each), then lse2 and delta (block_m floats each) padded to
//   a whole 1024-byte block;
//   dS^T of each consumer warpgroup (its 64 keys x block_m queries, 16-bit, swizzled), twice: the
//   warpgroups read each other's, so a tile's buffers are rewritten two tiles later;
//   each consumer's dQ staging buffer (block_m x 64 fp32);
//   the mbarriers: K/V full, then Q full and Q empty per stage.
// With the deterministic kernel's writer (dq_buffers > 1 staging buffers per consumer), the stages
// hold Q and dO only and every stage's lse2 and delta follow the staging buffers (no padding:
// two buffers fit at D = 128), and after the mbarriers come dQ full and dQ empty per staging
// buffer, the walk's end (an mbarrier and the walk's tile count) and each buffer's record for the
// writer (where its block goes, after which turn).
struct BwdSmemLayout {
  int kv_bytes, q_bytes, stages, consumers, block_m, dq_buffers;
  FJ_SM90_TILES_FN constexpr BwdSmemLayout(int head_dim, int block_m_, int block_n, int stages_, int dq_buffers_ = 1)
      : kv_bytes(fwd_tile_bytes(block_n, head_dim)), q_bytes(fwd_tile_bytes(block_m_, head_dim)), stages(stages_),
        consumers(block_n / 64), block_m(block_m_), dq_buffers(dq_buffers_) {}

  FJ_SM90_TILES_FN constexpr bool writer() const { return dq_buffers > 1; }
  FJ_SM90_TILES_FN constexpr int k() const { return 0; }
  FJ_SM90_TILES_FN constexpr int v() const { return kv_bytes; }
  FJ_SM90_TILES_FN constexpr int q(int s) const { return 2 * kv_bytes + s * stage_bytes(); }
  FJ_SM90_TILES_FN constexpr int dout(int s) const { return q(s) + q_bytes; }
  FJ_SM90_TILES_FN constexpr int lse2(int s) const {
    return writer() ? dq(0, dq_buffers) + s * 8 * block_m : q(s) + 2 * q_bytes;
  }
  FJ_SM90_TILES_FN constexpr int delta(int s) const { return lse2(s) + 4 * block_m; }
  // Consumer w's dS^T of the tiles whose place in the walk has parity `buffer`.
  FJ_SM90_TILES_FN constexpr int ds(int w, int buffer) const { return q(stages) + (buffer * consumers + w) * ds_bytes(); }
  FJ_SM90_TILES_FN constexpr int dq(int w, int buffer = 0) const {
    return ds(0, 2) + (buffer * consumers + w) * dq_bytes();
  }
  FJ_SM90_TILES_FN constexpr int kv_full() const { return barrier(0); }
  FJ_SM90_TILES_FN constexpr int q_full(int s) const { return barrier(1 + s); }
  FJ_SM90_TILES_FN constexpr int q_empty(int s) const { return barrier(1 + stages + s); }
  FJ_SM90_TILES_FN constexpr int dq_full(int w, int buffer) const {
    return barrier(1 + 2 * stages + buffer * consumers + w);
  }
  FJ_SM90_TILES_FN constexpr int dq_empty(int w, int buffer) const {
    return barrier(1 + 2 * stages + (dq_buffers + buffer) * consumers + w);
  }
  // The end of the producer's walk (one arrival) and its number of tiles, for the writer.
  FJ_SM90_TILES_FN constexpr int walk_end() const { return barrier(1 + 2 * stages + 2 * dq_buffers * consumers); }
  FJ_SM90_TILES_FN constexpr int walk_tiles() const { return walk_end() + 8; }
  // Where the writer adds the block a staging buffer holds, and after which turn (3 x 8 bytes).
  FJ_SM90_TILES_FN constexpr int dq_record(int w, int buffer) const {
    return walk_end() + 16 + (buffer * consumers + w) * 32;
  }
  FJ_SM90_TILES_FN constexpr int end() const { return writer() ? dq_record(0, dq_buffers) : barrier(1 + 2 * stages); }
  FJ_SM90_TILES_FN constexpr int bytes() const { return end() + kTileAlign; }

 private:
  FJ_SM90_TILES_FN constexpr int stage_bytes() const {
    return 2 * q_bytes + (writer() ? 0 : bwd_row_stats_bytes(block_m));
  }
  FJ_SM90_TILES_FN constexpr int ds_bytes() const { return 64 * block_m * 2; }
  FJ_SM90_TILES_FN constexpr int dq_bytes() const { return 64 * block_m * 4; }
  FJ_SM90_TILES_FN constexpr int barrier(int i) const { return (writer() ? lse2(stages) : dq(0, 1)) + 8 * i; }
};

constexpr int bwd_smem_bytes(int head_dim, int block_m, int block_n, int stages, int dq_buffers = 1) {
  return BwdSmemLayout(head_dim, block_m, block_n, stages, dq_buffers).bytes();
}

// The wide backward's shared memory (templates/sm90/attention_bwd_wide.cuh, head dims whose dK
// and dV are split between the two consumer warpgroups), from the CTA's 1024-byte aligned start:
//   K and V of the CTA's block_n keys, loaded once;
//   Q of each of the `stages` query tiles in flight, then one dO (released halfway through a tile);
//   P^T and dS^T (block_n keys x block_m queries, 16-bit, swizzled), passed between the warpgroups;
//   dP^T in fp32 (each thread's accumulators in place), passed the other way;
//   each warpgroup's dQ staging buffer (block_m x 64 fp32);
//   lse2 and delta of each stage (block_m floats each);
//   the mbarriers: K/V full, Q full and Q empty per stage, dO full, dO empty.
struct BwdWideSmemLayout {
  int kv_bytes, q_bytes, stages, block_m, block_n;
  FJ_SM90_TILES_FN constexpr BwdWideSmemLayout(int head_dim, int block_m_, int block_n_, int stages_)
      : kv_bytes(fwd_tile_bytes(block_n_, head_dim)), q_bytes(fwd_tile_bytes(block_m_, head_dim)), stages(stages_),
        block_m(block_m_), block_n(block_n_) {}

  FJ_SM90_TILES_FN constexpr int k() const { return 0; }
  FJ_SM90_TILES_FN constexpr int v() const { return kv_bytes; }
  FJ_SM90_TILES_FN constexpr int q(int s) const { return 2 * kv_bytes + s * q_bytes; }
  FJ_SM90_TILES_FN constexpr int dout() const { return q(stages); }
  FJ_SM90_TILES_FN constexpr int p() const { return dout() + q_bytes; }
  FJ_SM90_TILES_FN constexpr int ds() const { return p() + pair_bytes(); }
  FJ_SM90_TILES_FN constexpr int dp() const { return ds() + pair_bytes(); }
  FJ_SM90_TILES_FN constexpr int dq(int w) const { return dp() + 2 * pair_bytes() + w * 64 * block_m * 4; }
  FJ_SM90_TILES_FN constexpr int lse2(int s) const { return dq(2) + s * 8 * block_m; }
  FJ_SM90_TILES_FN constexpr int delta(int s) const { return lse2(s) + 4 * block_m; }
  FJ_SM90_TILES_FN constexpr int kv_full() const { return barrier(0); }
  FJ_SM90_TILES_FN constexpr int q_full(int s) const { return barrier(1 + s); }
  FJ_SM90_TILES_FN constexpr int q_empty(int s) const { return barrier(1 + stages + s); }
  FJ_SM90_TILES_FN constexpr int do_full() const { return barrier(1 + 2 * stages); }
  FJ_SM90_TILES_FN constexpr int do_empty() const { return barrier(2 + 2 * stages); }
  FJ_SM90_TILES_FN constexpr int end() const { return barrier(3 + 2 * stages); }
  FJ_SM90_TILES_FN constexpr int bytes() const { return end() + kTileAlign; }

 private:
  FJ_SM90_TILES_FN constexpr int pair_bytes() const { return block_n * block_m * 2; }  // 16-bit keys x queries
  FJ_SM90_TILES_FN constexpr int barrier(int i) const { return lse2(stages) + 8 * i; }
};

constexpr int bwd_wide_smem_bytes(int head_dim, int block_m, int block_n, int stages) {
  return BwdWideSmemLayout(head_dim, block_m, block_n, stages).bytes();
}

// The split backward's shared memory (templates/sm90/attention_bwd_split.cuh: a value head dim of
// its own, dV kept by one consumer warpgroup and dK by the other), from the CTA's 1024-byte
// aligned start:
//   K (head_dim columns) and V (head_dim_v) of the CTA's block_n keys, loaded once;
//   per stage: Q (head_dim), dO (head_dim_v), then lse2 and delta (block_m floats each);
//   dS^T (block_n keys x block_m queries, 16-bit, swizzled), passed from warpgroup 0 to 1;
//   dP^T in fp32 (each thread's accumulators in place), passed from 1 to 0;
//   each warpgroup's dQ staging buffer (block_m x 64 fp32);
//   the mbarriers: K/V full, then Q full and Q empty per stage.
// At 192 / 128: 40 KB + 2 x 41 KB + 8 KB + 16 KB + 32 KB = 178 KB.
struct BwdSplitSmemLayout {
  int k_bytes, v_bytes, q_bytes, do_bytes, stages, block_m, block_n;
  FJ_SM90_TILES_FN constexpr BwdSplitSmemLayout(int head_dim, int head_dim_v, int block_m_, int block_n_, int stages_)
      : k_bytes(fwd_tile_bytes(block_n_, head_dim)), v_bytes(fwd_tile_bytes(block_n_, head_dim_v)),
        q_bytes(fwd_tile_bytes(block_m_, head_dim)), do_bytes(fwd_tile_bytes(block_m_, head_dim_v)), stages(stages_),
        block_m(block_m_), block_n(block_n_) {}

  FJ_SM90_TILES_FN constexpr int k() const { return 0; }
  FJ_SM90_TILES_FN constexpr int v() const { return k_bytes; }
  FJ_SM90_TILES_FN constexpr int q(int s) const { return k_bytes + v_bytes + s * stage_bytes(); }
  FJ_SM90_TILES_FN constexpr int dout(int s) const { return q(s) + q_bytes; }
  FJ_SM90_TILES_FN constexpr int lse2(int s) const { return dout(s) + do_bytes; }
  FJ_SM90_TILES_FN constexpr int delta(int s) const { return lse2(s) + 4 * block_m; }
  FJ_SM90_TILES_FN constexpr int ds() const { return q(stages); }
  FJ_SM90_TILES_FN constexpr int dp() const { return ds() + block_n * block_m * 2; }
  FJ_SM90_TILES_FN constexpr int dq(int w) const { return dp() + block_n * block_m * 4 + w * 64 * block_m * 4; }
  FJ_SM90_TILES_FN constexpr int kv_full() const { return barrier(0); }
  FJ_SM90_TILES_FN constexpr int q_full(int s) const { return barrier(1 + s); }
  FJ_SM90_TILES_FN constexpr int q_empty(int s) const { return barrier(1 + stages + s); }
  FJ_SM90_TILES_FN constexpr int end() const { return barrier(1 + 2 * stages); }
  FJ_SM90_TILES_FN constexpr int bytes() const { return end() + kTileAlign; }

 private:
  FJ_SM90_TILES_FN constexpr int stage_bytes() const { return q_bytes + do_bytes + bwd_row_stats_bytes(block_m); }
  FJ_SM90_TILES_FN constexpr int barrier(int i) const { return dq(2) + 8 * i; }
};

constexpr int bwd_split_smem_bytes(int head_dim, int head_dim_v, int block_m, int block_n, int stages) {
  return BwdSplitSmemLayout(head_dim, head_dim_v, block_m, block_n, stages).bytes();
}

}  // namespace sm90
}  // namespace flexjit

#undef FJ_SM90_TILES_FN

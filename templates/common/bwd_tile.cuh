// flexjit: what both backward families do for the (key, query) pairs of a tile, in the
// transposed layout (rows = keys, columns = queries, each warp's accumulators in the mma.sync
// m16n8 layout, which wgmma's m64 accumulators also have per warp), and which query tiles a CTA's
// keys meet. Included by templates/sm80/attention_bwd.cuh and templates/sm90/attention_bwd.cuh.
#pragma once

#include "common/attention_common.cuh"
#include "common/bwd_grid_order.cuh"
#include "common/kernel_args.cuh"
#include "common/mods_traits.cuh"

namespace flexjit {
namespace detail {

// The m16n8k16 products of a backward tile of BM queries and head dim D: what both families'
// kernels loop over.
template <int D, int BM>
struct BwdSteps {
  static constexpr int KD = D / 16;   // k16 steps over the head dim (S^T, dP^T)
  static constexpr int NQ = BM / 8;   // n8 tiles over the queries (S^T, dP^T)
  static constexpr int KQ = BM / 16;  // k16 steps over the queries (dV, dK)
  static constexpr int ND = D / 8;    // n8 tiles over the head dim (dV, dK)
};

// A main backward CTA's kv tile and (batch, kv head), from the grid {group * kv_tiles, groups}
// (bwd_grid_slot): groups of args.kv_heads_per_group (b, kv head)s one after another, the kv tile
// slowest within a group. The low kv tiles carry the most query tiles under causal-like masks
// (prefix, top-k too), so a group's longest CTAs start first; and the CTAs running at once share
// a few heads, whose Q, dO and dQ accumulator stay in L2 while every kv tile of them passes over
// (the host sizes the groups: backward_grid_groups).
struct BwdKvTile {
  int n_block, hk, b;
};
__device__ __forceinline__ BwdKvTile bwd_kv_tile(const BwdArgs& args) {
  const BwdGridSlot slot = bwd_grid_slot(blockIdx.x, blockIdx.y, static_cast<unsigned>(args.kv_heads_per_group));
  const int bh = static_cast<int>(slot.head);
  return {static_cast<int>(slot.kv_tile), bh % args.Hkv, bh / args.Hkv};
}

// acc[0] += a, acc[1] += b, atomically (8-byte aligned): one vector reduction on sm_90, two
// scalar ones before.
__device__ __forceinline__ void red_add_2(float* acc, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(acc), "f"(a), "f"(b) : "memory");
#else
  atomicAdd(acc, a);
  atomicAdd(acc + 1, b);
#endif
}
__device__ __forceinline__ void lds_64(unsigned addr, float& a, float& b) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(a), "=f"(b) : "r"(addr));
}

// The order of dq_accum within one query tile of the sm90 backward (its config's kDqBlocked):
// the tile's 64 rows x D floats, the same span as in the row-major order (so that the pre-pass
// zeroes it row by row), hold 64-column blocks of 64 x 64 floats, each the image of one shared-
// memory buffer that the copy engine adds at once. In a block, the 16-byte chunks of row r are
// XOR-swizzled by 2 (r % 8), so that a warp's stores of wgmma accumulators (rows g, columns 2t)
// hit distinct banks; the swizzle keeps chunk pairs (8 floats from a column multiple of 8) together.
struct DqBlockedLayout {
  static constexpr int kRows = 64;
  static constexpr int kBlockFloats = 64 * 64;
  __device__ __forceinline__ static int index(int row, int col) {
    const int chunk = ((col & 63) >> 2) ^ ((row & 7) << 1);
    return (col >> 6) * kBlockFloats + row * 64 + chunk * 4 + (col & 3);
  }
};

// The query tiles a CTA's keys [k0, k1) of (b, kv head hk) meet, head by head of the kv head's
// group, each with its class (CTA-uniform, like the forward's KvTileSchedule). A program whose
// mask reads tensors, or that follows block lists, walks the row of the transposed tile map
// built for this call (args.tile_map: common/tile_map.cuh, build_q_tile_map); any other walks
// the q range and classifies each tile itself. kDescending walks each head's tiles from the last
// down (the deterministic dQ's order: common/bwd_tile.cuh DqTurns).
template <class Mods, int BM, int BN, bool kDescending = false>
struct QTileSchedule {
  static constexpr bool kMapped = BlockListOf<Mods>::value || TileMapOf<Mods>::value;

  __device__ __forceinline__ QTileSchedule(const BwdArgs& args, const typename Mods::Params& p, int b, int hk, int k0,
                                           int k1)
      : args_(args), p_(p), b_(b), k0_(k0), k1_(k1), Tq_(args.Tq) {
    const int group = args.Hq / args.Hkv;
    h_ = hk * group - 1;
    h_end_ = (hk + 1) * group;
    next_ = end_ = 0;
    next_head();
    seek();
  }
  __device__ __forceinline__ bool has_tile() const { return h_ < h_end_; }
  __device__ __forceinline__ int head() const { return h_; }
  __device__ __forceinline__ int tile() const { return tile_; }  // query tile index (rows tile * BM ...)
  __device__ __forceinline__ int tile_class() const { return cls_; }
  __device__ __forceinline__ void pop() {
    next_ += kStep;
    seek();
  }

 private:
  static constexpr int kStep = kDescending ? -1 : 1;
  // Walks next_ towards end_ (exclusive) by kStep over [first, last) (the walk goes on while
  // next_ is short of end_ in kStep's direction).
  __device__ __forceinline__ void walk(int first, int last) {
    next_ = kDescending ? last - 1 : first;
    end_ = kDescending ? first - 1 : last;
  }
  // Moves to the next head that has query tiles to walk: the map row's entries, or the tiles of
  // the q range.
  __device__ __forceinline__ void next_head() {
    for (++h_; h_ < h_end_; ++h_) {
      if constexpr (kMapped) {
        const i64 row = static_cast<i64>(b_) * args_.tile_map.b_stride + static_cast<i64>(h_) * args_.tile_map.h_stride +
                        k0_ / BN;
        row_ = args_.tile_map.entries + row * args_.tile_map.row_entries;
        next_ = 0;
        end_ = __ldg(args_.tile_map.counts + row);
        if (end_ > 0) {
          walk(0, end_);
          return;
        }
      } else {
        int lo = 0, hi = Tq_;
        QRangeOf<Mods>::get(p_, b_, h_, k0_, k1_, Tq_, &lo, &hi);
        lo = max2(lo, 0);
        hi = min2(hi, Tq_);
        if (lo < hi) {
          walk(lo / BM, (hi + BM - 1) / BM);
          return;
        }
      }
    }
  }
  // Moves to the first tile from next_ on (of this head or a later one) that is not EMPTY.
  __device__ __forceinline__ void seek() {
    while (h_ < h_end_) {
      if constexpr (kMapped) {
        if (kDescending ? next_ > end_ : next_ < end_) {
          const int e = __ldg(row_ + next_);
          tile_ = e >> 2;
          cls_ = e & 3;
          return;
        }
      } else {
        for (; kDescending ? next_ > end_ : next_ < end_; next_ += kStep) {
          const int q0 = next_ * BM;
          cls_ = Mods::classify(p_, b_, h_, q0, min2(q0 + BM, Tq_), k0_, k1_);
          if (cls_ != EMPTY) {
            tile_ = next_;
            return;
          }
        }
      }
      next_head();
    }
  }

  const BwdArgs& args_;
  const typename Mods::Params& p_;
  int b_, k0_, k1_, Tq_;
  int h_, h_end_;
  int next_, end_;   // the map row's entry or the q range's tile next, and where the walk ends
  int tile_ = 0;     // the current query tile
  int cls_ = EMPTY;  // ... and its class
  const int* row_ = nullptr;
};

// Deterministic dQ: the kv tiles whose CTAs reach query tile m of (b, h) add into its dQ rows in
// kv tile order. A CTA's turn there is the number of kv tiles below its own that QTileSchedule
// walks to (h, m), asked of the same q range and classes (or map rows) per kv tile, so the count
// and the CTAs that advance args.dq_turns agree by construction. The grid runs each head's kv
// tiles in ascending launch order (bwd_grid_slot), so every tile a CTA waits for has started.
// The Hopper kernels walk each head's query tiles from the last down (kDescending) when ordered:
// under causal-like masks every kv tile's walk then ends at the same last tile, so neighbouring
// kv tiles reach a query tile at the same step (or the lower one first, under windows), where the
// ascending walk brought the upper one there two steps early to wait.
template <class Mods, int BM, int BN>
struct DqTurns {
  // Whether the CTA of kv tile n walks to query tile m of head h.
  static __device__ __forceinline__ bool visits(const BwdArgs& args, const typename Mods::Params& p, int b, int h,
                                                int n, int m) {
    if constexpr (QTileSchedule<Mods, BM, BN>::kMapped) {
      const i64 row = static_cast<i64>(b) * args.tile_map.b_stride + static_cast<i64>(h) * args.tile_map.h_stride + n;
      const int* entries = args.tile_map.entries + row * args.tile_map.row_entries;
      int lo = 0, hi = __ldg(args.tile_map.counts + row);  // entries ascend by tile: bisect for m
      while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if ((__ldg(entries + mid) >> 2) < m) lo = mid + 1;
        else hi = mid;
      }
      return lo < __ldg(args.tile_map.counts + row) && (__ldg(entries + lo) >> 2) == m;
    } else {
      const int Tq = args.Tq, k0 = n * BN, k1 = min2(k0 + BN, args.Tkv);
      int lo = 0, hi = Tq;
      QRangeOf<Mods>::get(p, b, h, k0, k1, Tq, &lo, &hi);
      lo = max2(lo, 0);
      hi = min2(hi, Tq);
      if (lo >= hi || m < lo / BM || m >= (hi + BM - 1) / BM) return false;
      const int q0 = m * BM;
      return Mods::classify(p, b, h, q0, min2(q0 + BM, Tq), k0, k1) != EMPTY;
    }
  }

  // Warp-collective: the number of kv tiles below n that walk to (h, m) and add into n's replica.
  static __device__ __forceinline__ int turn(const BwdArgs& args, const typename Mods::Params& p, int b, int h, int n,
                                             int m) {
    const int lane = threadIdx.x & 31;
    const int R = args.dq_replicas;
    int count = 0;
    for (int base = n % R; base < n; base += 32 * R) {
      const int other = base + lane * R;
      const bool v = other < n && visits(args, p, b, h, other, m);
      count += __popc(__ballot_sync(0xffffffffu, v));
    }
    return count;
  }

  // The counter of (b, h, m) in kv tile n's replica.
  static __device__ __forceinline__ int* counter(const BwdArgs& args, int b, int h, int m, int n) {
    const i64 per_replica = static_cast<i64>(args.B) * args.Hq * (args.Tq_pad / BM);
    return args.dq_turns + (n % args.dq_replicas) * per_replica + (static_cast<i64>(b) * args.Hq + h) * (args.Tq_pad / BM) +
           m;
  }

  // Kv tile n's replica of dq_accum.
  static __device__ __forceinline__ float* accum(const BwdArgs& args, int n) {
    return args.dq_accum + (n % args.dq_replicas) * args.dq_replica_floats;
  }

  // One thread: until `turn` adds have been made before this one (acquire: their sums are seen).
  static __device__ __forceinline__ void wait(const int* counter, int turn) {
    int seen;
    for (;;) {
      asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(seen) : "l"(counter) : "memory");
      if (seen >= turn) return;
      __nanosleep(64);
    }
  }

  // One thread, after every thread's adds and a fence: the next kv tile's turn.
  static __device__ __forceinline__ void pass(int* counter) {
    asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(counter) : "memory");
  }
};

// P^T of one tile in place, from the raw dot products S^T (rows: this thread's keys row, row + 8;
// columns: queries col0 + 8 nt + {0, 1}): exp2(logit2 - lse2) where the mask keeps the pair, else 0.
// `slope` receives d score_mod / d score per element (kSlope), `xs` the score score_mod saw (kKeep).
template <class Mods, bool kMask, bool kBounds, bool kSlope, bool kKeep, int NQ, int NX, class Context>
__device__ __forceinline__ void transposed_probabilities(float (&s)[NQ][4], float (&slope)[NQ][4], float (&xs)[NX][4],
                                                         const Context& c, const BwdArgs& args, int b, int h, int row0,
                                                         int col0, unsigned s_lse2) {
#pragma unroll
  for (int nt = 0; nt < NQ; ++nt) {
    float l2[2];
    lds_64(s_lse2 + (nt * 8) * 4, l2[0], l2[1]);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = row0 + (e >> 1) * 8;
      const int query = col0 + nt * 8 + (e & 1);
      bool keep = !kBounds || (key < args.Tkv && query < args.Tq);
      if constexpr (kMask) keep = keep && Mods::mask(c, b, h, query, key);
      const float x = s[nt][e] * args.scale;
      float logit2;
      if constexpr (Mods::kHasScoreMod) {
        logit2 = keep ? Mods::score(c, x, b, h, query, key) * kLog2e : neg_inf();
      } else {
        logit2 = keep ? s[nt][e] * args.scale_log2 : neg_inf();
      }
      s[nt][e] = fast_exp2(logit2 - l2[e & 1]);  // -inf - lse2 and logit - (+inf) both give 0
      if constexpr (kSlope) slope[nt][e] = keep ? Mods::d_score(c, x, b, h, query, key) : 0.f;
      if constexpr (kKeep) xs[nt < NX ? nt : 0][e] = x;  // NX == NQ whenever kKeep
    }
  }
}

// By class, as common/logits.cuh does for the forward: tiles at the sequence ends take the bounds
// checks and the mask, PARTIAL tiles the mask, FULL tiles neither.
template <class Mods, bool kSlope, bool kKeep, int NQ, int NX, class Context>
__device__ __forceinline__ void tile_probabilities(float (&s)[NQ][4], float (&slope)[NQ][4], float (&xs)[NX][4],
                                                   const Context& c, const BwdArgs& args, int b, int h, int row0,
                                                   int col0, unsigned s_lse2, int cls, bool edge) {
  if (edge) {
    transposed_probabilities<Mods, Mods::kHasMask, true, kSlope, kKeep>(s, slope, xs, c, args, b, h, row0, col0, s_lse2);
  } else if (Mods::kHasMask && cls == PARTIAL) {
    transposed_probabilities<Mods, Mods::kHasMask, false, kSlope, kKeep>(s, slope, xs, c, args, b, h, row0, col0,
                                                                         s_lse2);
  } else {
    transposed_probabilities<Mods, false, false, kSlope, kKeep>(s, slope, xs, c, args, b, h, row0, col0, s_lse2);
  }
}

// dS^T = P^T (dP^T - delta) in place of P^T (rows: the keys key_row0, key_row0 + 8; columns: the
// queries q0 + 8 nt + 2 t + {0, 1}, delta at s_delta[q - q0]), times d score_mod / d score: per element when it varies (kSlope:
// already folded into p unless kScatter), as a constant when it is one. kScatter: also scatters
// dS * d score_mod / d tensor into the captured tensors' gradients, from the scores xs.
template <class Mods, bool kScatter, bool kSlope, int NQ, int NX, class Context>
__device__ __forceinline__ void transposed_ds(float (&p)[NQ][4], const float (&dp)[NQ][4], const float (&xs)[NX][4],
                                              const Context& c, const typename Mods::Grads& grads, unsigned s_delta,
                                              int b, int h, int key_row0, int q0, int t) {
#pragma unroll
  for (int nt = 0; nt < NQ; ++nt) {
    float dl[2];
    lds_64(s_delta + (nt * 8 + 2 * t) * 4, dl[0], dl[1]);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float ds = p[nt][e] * (dp[nt][e] - dl[e & 1]);
      if constexpr (kScatter) {
        const int key = key_row0 + (e >> 1) * 8;
        const int query = q0 + nt * 8 + 2 * t + (e & 1);
        float slope = 1.f;
        if (p[nt][e] != 0.f) {
          if constexpr (kSlope) slope = Mods::d_score(c, xs[nt][e], b, h, query, key);
          Mods::score_grads(c, grads, ds, xs[nt][e], b, h, query, key);
        }
        p[nt][e] = ds * slope;
      } else {
        p[nt][e] = ds;
      }
    }
  }
  if constexpr (Mods::kHasScoreMod && Mods::kScoreSlopeConstant) {
#pragma unroll
    for (int nt = 0; nt < NQ; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) p[nt][e] *= Mods::kScoreSlope;
  }
}

// dK = scale * acc and dV of this thread's keys key_row0 and key_row0 + 8 (columns d0 + 8 nd + 2 t,
// +1), in the element type; rows past Tkv are not written.
template <bool kBf16, int ND>
__device__ __forceinline__ void store_dk_dv(const BwdArgs& args, const float (&dk)[ND][4], const float (&dv)[ND][4],
                                            int b, int hk, int key_row0, int t, int d0 = 0) {
  unsigned short* gdK = static_cast<unsigned short*>(args.dk) + static_cast<i64>(b) * args.dk_b +
                        static_cast<i64>(hk) * args.dk_h;
  unsigned short* gdV = static_cast<unsigned short*>(args.dv) + static_cast<i64>(b) * args.dv_b +
                        static_cast<i64>(hk) * args.dv_h;
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int key = key_row0 + hf * 8;
    if (key >= args.Tkv) continue;
#pragma unroll
    for (int nd = 0; nd < ND; ++nd) {
      const int d = d0 + nd * 8 + 2 * t;
      *reinterpret_cast<unsigned*>(gdK + static_cast<i64>(key) * args.dk_t + d) =
          pack2<kBf16>(dk[nd][2 * hf] * args.scale, dk[nd][2 * hf + 1] * args.scale);
      *reinterpret_cast<unsigned*>(gdV + static_cast<i64>(key) * args.dv_t + d) =
          pack2<kBf16>(dv[nd][2 * hf], dv[nd][2 * hf + 1]);
    }
  }
}

// One gradient of this thread's keys key_row0 and key_row0 + 8 (columns 8 nd + 2 t, +1), times
// `factor`, in the element type, for kernels whose dK and dV are kept apart (sm90's split form):
// dK with the scale, dV with 1. `g` is dk or dv with its strides; rows past Tkv are not written.
template <bool kBf16, int ND>
__device__ __forceinline__ void store_key_gradient(void* g, long long g_b, long long g_h, long long g_t,
                                                   const float (&acc)[ND][4], float factor, int Tkv, int b, int hk,
                                                   int key_row0, int t) {
  unsigned short* rows = static_cast<unsigned short*>(g) + static_cast<i64>(b) * g_b + static_cast<i64>(hk) * g_h;
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int key = key_row0 + hf * 8;
    if (key >= Tkv) continue;
#pragma unroll
    for (int nd = 0; nd < ND; ++nd)
      *reinterpret_cast<unsigned*>(rows + static_cast<i64>(key) * g_t + nd * 8 + 2 * t) =
          pack2<kBf16>(acc[nd][2 * hf] * factor, acc[nd][2 * hf + 1] * factor);
  }
}

}  // namespace detail
}  // namespace flexjit

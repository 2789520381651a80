// flexjit: the kv tiles one query tile visits, in order, with their classes. Every kernel family
// walks keys the same way, whatever it does with a tile once it has it:
//   - dense: the tiles of the closed-form kv range (Mods::kv_range), each classified by
//     Mods::classify; EMPTY tiles are skipped (never loaded);
//   - block list (Mods::kHasBlockList, top-k): the listed kv blocks in list order, skipping -1 and
//     out-of-range entries and repeats of an earlier entry, each block intersected with the kv
//     range and its tiles classified;
//   - tile map (Mods::kHasTileMap and a built map in AttnArgs): exactly the map's row for this
//     query tile, with the classes recorded there (common/tile_map.cuh builds it).
// All of it is CTA-uniform: every thread computes the same sequence.
//
//   KvTileSchedule<Mods, BN> kv(args, p, b, h, m_block, q0, q1, Tkv);
//   for (kv.start(); kv.has_tile(); kv.pop()) visit(kv.tile() * BN, kv.tile_class());
#pragma once

#include "common/attention_common.cuh"
#include "common/mods_traits.cuh"

namespace flexjit {

template <class Mods, int BN>
struct KvTileSchedule {
  static constexpr bool kBlockList = detail::BlockListOf<Mods>::value;
  static constexpr bool kTileMap = detail::TileMapOf<Mods>::value;
  static_assert(!(kTileMap && kBlockList), "a Mods follows a block list or a tile map, not both");

  // Query rows [q0, q1) of query tile m_block of (b, h), against the Tkv keys of sequence b
  // (args.Tkv, or the sequence's own length where a call gives each one).
  __device__ __forceinline__ KvTileSchedule(const AttnArgs& args, const typename Mods::Params& p, int b, int h,
                                            int m_block, int q0, int q1, int Tkv)
      : p_(p), b_(b), h_(h), q0_(q0), q1_(q1), Tkv_(Tkv) {
    lo_ = 0;
    hi_ = Tkv_;
    Mods::kv_range(p, b, h, q0, q1, Tkv_, &lo_, &hi_);
    lo_ = max2(lo_, 0);
    hi_ = min2(hi_, Tkv_);
    // Dense: the tiles [next_, end_). Block list: end_ ends the current listed block's tiles.
    end_ = hi_ > lo_ ? (hi_ + BN - 1) / BN : 0;
    next_ = hi_ > lo_ ? lo_ / BN : 0;
    if constexpr (kBlockList) {
      count_ = hi_ > lo_ ? Mods::block_list_count(p, b, h, q0) : 0;
      end_ = next_ = 0;
    }
    // Tile map: the builder has already intersected with kv_range and classified; its row lists
    // the visited tiles as tile * 4 + class.
    use_map_ = kTileMap && args.tile_map.counts != nullptr;
    if (use_map_) {
      const i64 row = static_cast<i64>(b) * args.tile_map.b_stride + static_cast<i64>(h) * args.tile_map.h_stride + m_block;
      count_ = __ldg(args.tile_map.counts + row);
      map_row_ = args.tile_map.entries + row * args.tile_map.row_entries;
      end_ = next_ = 0;
    }
  }

  // Finds the first tile. Separate from the constructor so that a kernel can start its first
  // loads (Q) before the classification work.
  __device__ __forceinline__ void start() { seek(); }
  __device__ __forceinline__ bool has_tile() const { return next_ < end_; }
  __device__ __forceinline__ int tile() const { return next_; }  // kv tile index (keys tile * BN ...)
  __device__ __forceinline__ int tile_class() const { return cls_; }  // FULL or PARTIAL
  __device__ __forceinline__ void pop() {
    ++next_;
    seek();
  }

 private:
  // Moves to the first visitable tile at or after next_.
  __device__ __forceinline__ void seek() {
    if (use_map_) {
      if (++pos_ < count_) {
        const int e = __ldg(map_row_ + pos_);
        next_ = e >> 2;
        cls_ = e & 3;
        end_ = next_ + 1;
      } else {
        next_ = end_ = 0;
      }
      return;
    }
    for (;;) {
      for (; next_ < end_; ++next_) {
        const int k0 = next_ * BN;
        cls_ = Mods::classify(p_, b_, h_, q0_, q1_, k0, min2(k0 + BN, Tkv_));
        if (cls_ != EMPTY) return;
      }
      if constexpr (!kBlockList) {
        return;
      } else {
        static_assert(Mods::kBlockListKv % BN == 0, "kv block must be a multiple of the kv tile");
        // The next listed block, intersected with [lo, hi); repeats of an earlier entry are skipped.
        if (++pos_ >= count_) {
          next_ = end_ = 0;
          return;
        }
        const int first = Mods::block_list_entry(p_, b_, h_, q0_, pos_);
        if (first < 0 || first >= Tkv_) continue;
        bool repeat = false;
        for (int j = 0; j < pos_ && !repeat; ++j) repeat = Mods::block_list_entry(p_, b_, h_, q0_, j) == first;
        if (repeat) continue;
        const int a = max2(first, lo_);
        const int e = min2(min2(first + Mods::kBlockListKv, Tkv_), hi_);
        if (a >= e) continue;
        next_ = a / BN;
        end_ = (e + BN - 1) / BN;
      }
    }
  }

  const typename Mods::Params& p_;
  int b_, h_, q0_, q1_, Tkv_;
  int lo_, hi_;           // the kv range, clipped to [0, Tkv)
  int next_, end_;        // the current run of tiles
  int cls_ = EMPTY;       // class of tile next_
  int pos_ = -1;          // block list / tile map: the entry being walked (-1 before the first)
  int count_ = 0;         // ... and the number of entries
  bool use_map_ = false;
  const int* map_row_ = nullptr;
};

}  // namespace flexjit

// flexjit: decode against a KV cache (sm_80+, mma.sync m16n8k16, cp.async, ldmatrix): a few new
// query tokens per sequence against keys that live in pages (vLLM's layout) or in a dense block
// with a length per sequence. Memory-bound by design: every K/V byte is read once per CTA and
// serves all the query rows packed into it.
//
// GQA packing: a CTA takes up to decode::kRows (query head, new token) rows of one kv head, as one
// m16 tile (row r of the group's group * Tq rows is head hk * group + r / Tq, token r % Tq).
// Split-KV: grid.x cuts each sequence's keys into `splits` ranges of whole chunks; with more than
// one split, each CTA writes a normalised partial O and its LSE, and decode_combine merges them.
// Inside a CTA each of the decode::kWarps warps walks its own chunks (every kWarps-th one) through
// its own cp.async ring, so the main loop needs no block barrier; a chunk is up to 32 keys, one
// per lane: each lane finds its key's row (through the page table) and the warp copies the rows
// with 16-byte vectors. At the end the warps merge their (max, sum, O) in shared memory.
//
// The mods are the forward's (docs/design.md, "The Mods contract"): kv_range bounds the keys of
// every packed head, classify skips EMPTY chunks and the mask on FULL ones, a block list (top-k)
// gives the keys when the program has one (then every row of a CTA shares one list: the host
// packs accordingly). The mods never see a key >= kv_lens[b] or a query row >= Tq.
//
// Token-level top-k (Mods::kTokenList, TokenIndices): the rows of a CTA are the query heads of one
// kv head for ONE new token (token-major packing: row r is token r / group, head hk * group +
// r % group), all sharing one list, and the keys are that list's (decode/token_list.cuh): sorted,
// without -1 and repeats, clipped to the kv range, BN to a chunk. Work is proportional to K, not
// to the sequence. A plain forward call (no kv_lens) runs here too: kv_lens is null and every
// sequence has a.Tkv keys. An entry below -1 or past the sequence makes the CTA's rows NaN.
//
// The generator wraps both as, for example:
//   extern "C" __global__ void __launch_bounds__(Cfg::kThreads, 1)
//   flexjit_decode(const __grid_constant__ flexjit::DecodeArgs args,
//                  const __grid_constant__ Mods::Params params) {
//     flexjit::attention_decode<Mods, Cfg>(args, params);
//   }
// launched with grid (splits, Hkv * row_groups, B), block Cfg::kThreads, dynamic shared memory
// Cfg::kSmemBytes; and decode_combine with grid ceil(B * Hq * Tq / decode::kCombineRows), decode::kCombineThreads.
#pragma once

#include "common/attention_common.cuh"
#include "common/kv_cache.cuh"
#include "common/mods_traits.cuh"
#include "common/online_softmax.cuh"
#include "common/tile_config.cuh"
#include "decode/tiles.cuh"
#include "decode/token_list.cuh"
#include "sm80/warp_mma.cuh"

namespace flexjit {

// The CTA's query rows are its one m16 tile of packed rows: kBlockM = kRows.
template <int kHeadDim_, int kBlockN_, int kStages_, class Element_>
struct DecodeConfig : WarpTileConfig<kHeadDim_, decode::kRows, kBlockN_, decode::kWarps, kStages_, Element_> {
  static constexpr int kRows = decode::kRows;
  // Q fragments stay in registers up to D = 128; above, the 128 O accumulators need the room.
  static constexpr bool kQInRegs = kHeadDim_ <= 128;
  static constexpr int kSmemStride = decode::decode_smem_stride(kHeadDim_);
  static constexpr int kSmemBytes = decode::decode_smem_bytes(kHeadDim_, kBlockN_, kStages_);
};

// The same for a program with token lists: the shared memory keeps the list's keys after the rest
// (at kTokenListOffset); while the list is sorted, the rings hold it and the warps' sums of the scan.
template <int kHeadDim_, int kBlockN_, int kStages_, class Element_>
struct DecodeTokenListConfig : DecodeConfig<kHeadDim_, kBlockN_, kStages_, Element_> {
  static constexpr int kMaxTokenList = decode::max_token_list();
  static constexpr int kTokenListOffset = decode::decode_smem_bytes(kHeadDim_, kBlockN_, kStages_);
  static constexpr int kSmemBytes = decode::decode_smem_bytes(kHeadDim_, kBlockN_, kStages_, true);
  static_assert(kSmemBytes == kTokenListOffset + kMaxTokenList * 4, "the list's keys come last");
  static_assert(kSmemBytes <= decode::max_smem_bytes(), "within sm_80's shared memory per CTA");
  static_assert(decode::decode_ring_bytes(kHeadDim_, kBlockN_, kStages_) >= (kMaxTokenList + decode::kWarps) * 4,
                "the rings hold a whole list and the warps' sums while it is sorted");
};

namespace detail {

// Whether a copy loop is rolled, as a type: the loop's unroll pragma is chosen at compile time.
template <bool kRolled>
struct Rolled {
  static constexpr bool value = kRolled;
};

constexpr unsigned kFullWarp = 0xffffffffu;

// Sequence b as the decode kernel reads it. kMayBeWhole: a program with token lists, whose plain
// forward calls (no kv_lens: null) give every sequence all `capacity` keys, contiguous.
template <bool kMayBeWhole, int NTHREADS>
__device__ __forceinline__ CachedSequence decode_sequence(const KvCacheRef& c, int capacity, int b, int tid,
                                                          bool check_pages) {
  if constexpr (kMayBeWhole) {
    if (c.kv_lens == nullptr) return {capacity, false, nullptr};
  }
  return cached_sequence<NTHREADS>(c, capacity, b, tid, check_pages);
}

// A decode CTA's (kv head, row group) slot and split. The grid is (splits * folds, slots / folds,
// B): grid.y holds at most 65535 slots, so a launch of more (a prefill with token lists: 32768
// tokens of 128 heads in CTAs of 64) folds them into grid.x (api/decode_launch.cpp); the CTAs of
// the last fold past the slots do nothing.
__device__ __forceinline__ int decode_slot(const DecodeArgs& a) {
  return static_cast<int>(blockIdx.y + gridDim.y * (blockIdx.x / a.splits));
}
__device__ __forceinline__ int decode_split(const DecodeArgs& a) { return static_cast<int>(blockIdx.x % a.splits); }
__device__ __forceinline__ bool decode_slot_exists(const DecodeArgs& a) {
  return decode_slot(a) < a.Hq / a.group * a.row_groups;
}

// The packed (query head, new token) rows of a decode CTA: its slot is (kv head hk, row group),
// and the CTA takes rows [r0, r0 + nrows) of the kv head's group * Tq. Head-major (row r is head
// head0 + r / Tq, token r % Tq), or token-major (kTokenMajor, token lists: head head0 + r % group,
// token r / group; the host makes a CTA's rows heads of one token, which share its list).
template <bool kTokenMajor>
struct PackedRows {
  const DecodeArgs& a;
  int hk, r0, nrows, head0;
  int h_first, h_last;  // the query heads of the first and last row

  __device__ __forceinline__ explicit PackedRows(const DecodeArgs& args)
      : a(args), hk(decode_slot(args) / args.row_groups), r0((decode_slot(args) % args.row_groups) * args.rows_per_cta),
        nrows(min2(args.rows_per_cta, args.group * args.Tq - r0)), head0(hk * args.group), h_first(head_of(0)),
        h_last(head_of(nrows - 1)) {}

  // Packed row r of this CTA (0 <= r < nrows): its query head and token.
  __device__ __forceinline__ int head_of(int r) const {
    if constexpr (kTokenMajor) return head0 + (r0 + r) % a.group;
    else return head0 + (r0 + r) / a.Tq;
  }
  __device__ __forceinline__ int token_of(int r) const {
    if constexpr (kTokenMajor) return (r0 + r) / a.group;
    else return (r0 + r) % a.Tq;
  }
  // The tokens [qa, qb) that head h has among the rows.
  __device__ __forceinline__ void tokens_of_head(int h, int& qa, int& qb) const {
    if constexpr (kTokenMajor) {
      qa = token_of(0);
      qb = qa + 1;
    } else {
      const int first_row = (h - head0) * a.Tq;
      qa = max2(0, r0 - first_row);
      qb = min2(a.Tq, r0 + nrows - first_row);
    }
  }
};

// The keys any packed row of a CTA can attend to: the union over its heads of each head's kv range
// for the tokens it has in the CTA, within [0, len); lo = hi = 0 when empty.
template <class Mods, bool kTokenMajor>
__device__ __forceinline__ void packed_kv_range(const typename Mods::Params& p, int b,
                                                const PackedRows<kTokenMajor>& rows, int len, int& lo, int& hi) {
  lo = len, hi = 0;
  // Not unrolled: it runs once per CTA, and NVVM's unrolling of it took 3.4 of the 4.7 s the
  // kernel's front end needed (bench/NOTES.md, "Compile latency").
#pragma unroll 1
  for (int h = rows.h_first; h <= rows.h_last; ++h) {
    int qa, qb;
    rows.tokens_of_head(h, qa, qb);
    int l = 0, e = len;
    Mods::kv_range(p, b, h, qa, qb, len, &l, &e);
    // An empty asm hides the range from NVVM: a closed form of index arithmetic alone (causal:
    // min(qb + ..., len)) otherwise costs 0.4-0.5 s of its optimisation, relating it to every
    // loop bound of the kernel, for the same code (bench/NOTES.md, "Cold compile").
    asm("" : "+r"(l), "+r"(e));
    lo = min2(lo, max2(l, 0));
    hi = max2(hi, min2(e, len));
  }
  if (hi <= lo) lo = hi = 0;
}

// A chunk's class [k0, k1) over every packed head: EMPTY or FULL only when it is so for all.
template <class Mods, bool kTokenMajor>
__device__ __forceinline__ int packed_chunk_class(const typename Mods::Params& p, int b,
                                                  const PackedRows<kTokenMajor>& rows, int k0, int k1) {
  if constexpr (!Mods::kHasMask) {
    return static_cast<int>(FULL);
  } else {
    bool empty = true, full = true;
    for (int h = rows.h_first; h <= rows.h_last; ++h) {
      int qa, qb;
      rows.tokens_of_head(h, qa, qb);
      const int c = Mods::classify(p, b, h, qa, qb, k0, k1);
      empty = empty && c == EMPTY;
      full = full && c == FULL;
    }
    return static_cast<int>(empty ? EMPTY : full ? FULL : PARTIAL);
  }
}

// A packed row's end, from its running max m (log2 domain) and sum l: the scale of its O and its
// LSE (detail::finish_row_sum). A whole row (one split) takes the sink in; a split's partial row
// leaves it to decode_combine. A bad sequence makes both NaN.
template <class Mods>
__device__ __forceinline__ float decode_row_scale(const typename Mods::Params& p, int b, int h, float m, float l,
                                                  bool whole, bool bad, float& lse) {
  float inv;
  if constexpr (Mods::kHasSink) {
    inv = whole ? finish_row_sum<true>(l, m, Mods::sink(p, b, h) * kLog2e, lse) : finish_row_sum<false>(l, m, 0.f, lse);
  } else {
    inv = finish_row_sum<false>(l, m, 0.f, lse);
  }
  if (bad) lse = inv = __int_as_float(0x7fc00000);
  return inv;
}

// The logits of one chunk in place (the raw dot products of one m16 x BN tile): each thread holds
// rows g (index 0, 1) and g + 8 (index 2, 3) of the packed rows, columns 2t, 2t + 1 of each n8
// block. key_of_lane is this lane's key of the chunk (-1: none), so column c's key is lane c's.
template <class Mods, bool kMask, int NN, class Context>
__device__ __forceinline__ void decode_logits(float (&s)[1][NN][4], const Context& ctx_a, const Context& ctx_b,
                                              int b, const int (&head)[2], const int (&token)[2],
                                              const bool (&row_ok)[2], int key_of_lane, int t, float scale) {
#pragma unroll
  for (int nt = 0; nt < NN; ++nt) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int key = __shfl_sync(kFullWarp, key_of_lane, nt * 8 + 2 * t + c);
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const Context& ctx = hf == 0 ? ctx_a : ctx_b;
        float& x = s[0][nt][2 * hf + c];
        bool keep = row_ok[hf] && key >= 0;
        if constexpr (kMask) keep = keep && Mods::mask(ctx, b, head[hf], token[hf], key);
        if constexpr (Mods::kHasScoreMod) {
          x = keep ? Mods::score(ctx, x * scale, b, head[hf], token[hf], key) * kLog2e : neg_inf();
        } else {
          x = keep ? x : neg_inf();
        }
      }
    }
  }
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
template <class Mods, class Cfg>
__device__ __forceinline__ void attention_decode(const DecodeArgs& a, const typename Mods::Params& p) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int BN = Cfg::kBlockN;
  constexpr int S = Cfg::kStages;
  constexpr int W = Cfg::kWarps;
  constexpr int R = Cfg::kRows;
  constexpr int kThreads = Cfg::kThreads;
  constexpr bool kBf16 = Cfg::kIsBf16;
  constexpr int KD = D / 16;  // k16 steps over the head dim (QK^T)
  constexpr int ND = D / 8;   // n8 tiles over the head dim (PV output)
  constexpr int NN = BN / 8;  // n8 tiles over the keys (S)
  constexpr int KN = BN / 16; // k16 steps over the keys (PV)
  constexpr int kRowBytes = Cfg::kSmemStride * 2;
  constexpr unsigned kChunkBytes = BN * kRowBytes;
  constexpr unsigned kSlotBytes = 2 * kChunkBytes;
  constexpr bool kList = detail::BlockListOf<Mods>::value;
  constexpr bool kTokens = detail::token_list_of<Mods>(0);  // then Cfg is a DecodeTokenListConfig
  static_assert(D % 16 == 0 && D >= 16 && D <= 256, "head dim must be a multiple of 16 in [16, 256]");
  static_assert(BN % 16 == 0 && BN >= 16 && BN <= 32, "a chunk has 16 or 32 keys (one per lane)");
  static_assert(R == 16 && S >= 2 && kThreads == 128, "one m16 tile of rows, 4 warps, a double-buffered ring");

  extern __shared__ __align__(128) unsigned char flexjit_smem[];
  const unsigned sQ = smem_u32(flexjit_smem);
  const unsigned sRings = sQ + R * kRowBytes;

  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int t = lane & 3;
  if (!detail::decode_slot_exists(a)) return;
  const int split = detail::decode_split(a);
  const int b = blockIdx.z;
  const detail::PackedRows<kTokens> rows(a);  // token-major with token lists
  const int hk = rows.hk, nrows = rows.nrows;
  auto head_of = [&](int r) { return rows.head_of(r); };
  auto token_of = [&](int r) { return rows.token_of(r); };

  // ---- the sequence: its length, and (split 0) every page the length reaches. A bad value makes
  // this sequence's rows NaN; nothing outside k and v is read either way.
  const detail::CachedSequence seq = detail::decode_sequence<kTokens, kThreads>(a.cache, a.Tkv, b, tid, split == 0);
  int len = seq.len;
  bool bad = seq.bad;
  const bool paged = seq.pages != nullptr;
  const int* pt_row = seq.pages;

  // ---- Q: the packed rows into shared memory (rows >= nrows zero-filled).
  {
    const unsigned short* gq = static_cast<const unsigned short*>(a.q) + b * a.q_b;
    constexpr int kVectors = R * (D / 8);
#pragma unroll
    for (int it = 0; it < (kVectors + kThreads - 1) / kThreads; ++it) {
      const int i = tid + it * kThreads;
      if (kVectors % kThreads == 0 || i < kVectors) {
        const int r = i / (D / 8), ch = i % (D / 8);
        const bool ok = r < nrows;
        const unsigned short* src = ok ? gq + head_of(r) * a.q_h + token_of(r) * a.q_t + ch * 8 : gq;
        cp_async_16(sQ + r * kRowBytes + ch * 16, src, ok);
      }
    }
    cp_async_commit();
  }

  // ---- this thread's two rows (g and g + 8) and their per-CTA values of the mods.
  int head[2], token[2];
  bool row_ok[2];
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int r = g + 8 * hf;
    row_ok[hf] = r < nrows;
    head[hf] = head_of(row_ok[hf] ? r : 0);
    token[hf] = token_of(row_ok[hf] ? r : 0);
  }
  const typename detail::CtaOf<Mods>::type ctx_a = detail::CtaOf<Mods>::make(p, b, head[0]);
  const typename detail::CtaOf<Mods>::type ctx_b = detail::CtaOf<Mods>::make(p, b, head[1]);

  // ---- the keys any packed row can attend to: the union of each packed head's kv range, each
  // for the tokens of that head in this CTA.
  const int h_first = rows.h_first;
  int lo, hi;
  detail::packed_kv_range<Mods>(p, b, rows, len, lo, hi);
  auto classify = [&](int k0, int k1) { return detail::packed_chunk_class<Mods>(p, b, rows, k0, k1); };

  // ---- chunks. Dense: chunk c holds keys [base + c * BN, + BN) of the kv range. Block list: the
  // listed blocks' keys one after another (every row of the CTA shares the list of h_first,
  // query block 0: the host guarantees Tq <= the list's query block).
  int list_count = 0;
  if constexpr (kList) list_count = hi > lo ? Mods::block_list_count(p, b, h_first, 0) : 0;
  const int base = (lo / BN) * BN;
  int chunks = hi > lo ? (hi - base + BN - 1) / BN : 0;
  if constexpr (kList) chunks = (list_count * Mods::kBlockListKv + BN - 1) / BN;
  // Token list: the CTA's token's list of h_first (every row's: the host packs accordingly),
  // sorted in the rings (free until the first chunk is issued) into token_keys, past the rest.
  int token_count = 0;
  const int* token_keys = nullptr;
  if constexpr (kTokens) {
    int* keys = reinterpret_cast<int*>(flexjit_smem + Cfg::kTokenListOffset);
    int* scratch = reinterpret_cast<int*>(flexjit_smem + R * kRowBytes);
    token_count = detail::gather_token_list<Mods, kThreads>(p, b, h_first, token_of(0), len, lo, hi, scratch,
                                                            scratch + Cfg::kMaxTokenList, keys, tid, bad);
    token_keys = keys;
    chunks = (token_count + BN - 1) / BN;
  }
  const int per_split = (chunks + a.splits - 1) / a.splits;
  const int c_begin = min2(chunks, split * per_split);
  const int c_end = min2(chunks, c_begin + per_split);

  // This lane's key in chunk c, or -1.
  auto lane_key = [&](int c) {
    if (lane >= BN) return -1;
    if constexpr (kTokens) {
      const int i = c * BN + lane;
      return i < token_count ? token_keys[i] : -1;  // in [lo, hi) and the sequence already
    } else if constexpr (kList) {
      constexpr int KB = Mods::kBlockListKv;
      const int v = c * BN + lane;
      const int i = v / KB;
      if (i >= list_count) return -1;
      const int first = Mods::block_list_entry(p, b, h_first, 0, i);
      if (first < 0 || first >= len) return -1;
      for (int j = 0; j < i; ++j)  // a block listed twice is visited once
        if (Mods::block_list_entry(p, b, h_first, 0, j) == first) return -1;
      const int key = first + v % KB;
      return key >= lo && key < hi ? key : -1;
    } else {
      const int key = base + c * BN + lane;
      return key >= lo && key < hi ? key : -1;
    }
  };

  const unsigned short* gK = static_cast<const unsigned short*>(a.k) + (paged ? 0 : b * a.k_b) + hk * a.k_h;
  const unsigned short* gV = static_cast<const unsigned short*>(a.v) + (paged ? 0 : b * a.v_b) + hk * a.v_h;
  const unsigned sRing = sRings + warp * S * kSlotBytes;

  // Copies the chunk's BN rows (row r from lane r's offset; rows without a key zero-filled). The
  // prologue's chunks (once per CTA) are copied by a rolled loop, which takes ptxas a fifth less
  // time over the kernel (bench/NOTES.md); the main loop's stay unrolled.
  auto copy_rows = [&](unsigned s_chunk, const unsigned short* g_base, long long offset, int key, auto rolled) {
    constexpr int kPerRow = D / 8;  // 16-byte vectors per row
    constexpr int kVectors = BN * kPerRow;
    constexpr int kSteps = (kVectors + 31) / 32;
    auto copy_step = [&](int it) {
      const int i = lane + it * 32;
      const int r = (i / kPerRow) & 31;
      const long long row_offset = __shfl_sync(detail::kFullWarp, offset, r);
      const bool ok = __shfl_sync(detail::kFullWarp, key, r) >= 0;
      if (kVectors % 32 == 0 || i < kVectors) {
        const int ch = i % kPerRow;
        cp_async_16(s_chunk + r * kRowBytes + ch * 16, ok ? g_base + row_offset + ch * 8 : g_base, ok);
      }
    };
    if constexpr (decltype(rolled)::value) {
#pragma unroll 1
      for (int it = 0; it < kSteps; ++it) copy_step(it);
    } else {
#pragma unroll
      for (int it = 0; it < kSteps; ++it) copy_step(it);
    }
  };

  // This lane's key in chunk c and, paged, the page holding it (0 without a key). Its loads (the
  // page table; the block list) are started one chunk ahead of the copies that need them (`ahead`),
  // so that the warp does not wait a memory latency with nothing in flight.
  struct LaneRow {
    int chunk, key, page;
  };
  auto lane_row = [&](int c) {
    LaneRow r{c, c < c_end ? lane_key(c) : -1, 0};
    if (paged && r.key >= 0) r.page = detail::page_of(a.cache, pt_row, r.key);
    return r;
  };
  int next = c_begin + warp;
  LaneRow ahead = lane_row(next);

  // Issues this warp's next chunk that is not EMPTY into `slot` (K, then V: two commit groups;
  // two empty groups when none is left, so that the wait counts stay fixed). Gives the chunk's
  // class (-1: none) and this lane's key in it.
  auto issue = [&](int slot, int& cls, int& key, auto rolled) {
    cls = -1;
    for (; next < c_end; next += W) {
      if constexpr (kTokens) {
        cls = Mods::kHasMask ? PARTIAL : FULL;  // the mask applies per listed key
      } else if constexpr (kList) {
        cls = PARTIAL;
      } else {
        cls = classify(max2(base + next * BN, lo), min2(base + next * BN + BN, hi));
      }
      if (cls != EMPTY) break;
      cls = -1;
    }
    key = -1;
    if (cls < 0) {
      cp_async_commit();
      cp_async_commit();
      return;
    }
    const LaneRow row = ahead.chunk == next ? ahead : lane_row(next);
    next += W;
    ahead = lane_row(next);
    key = row.key;
    long long k_off = 0, v_off = 0;
    if (key >= 0 && paged) {
      const int slot_in_page = key % a.cache.page_size;
      if (row.page < 0 || row.page >= a.cache.num_pages) {
        bad = true;
        key = -1;
      } else {
        k_off = row.page * a.k_b + slot_in_page * a.k_t;
        v_off = row.page * a.v_b + slot_in_page * a.v_t;
      }
    } else if (key >= 0) {
      k_off = key * a.k_t;
      v_off = key * a.v_t;
    }
    const unsigned s_k = sRing + slot * kSlotBytes;
    copy_rows(s_k, gK, k_off, key, rolled);
    cp_async_commit();
    copy_rows(s_k + kChunkBytes, gV, v_off, key, rolled);
    cp_async_commit();
  };

  // Ring positions (warp-uniform class, per-lane key); position 0 is the chunk being computed.
  int ring_cls[S], ring_key[S];
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s, ring_cls[s], ring_key[s], detail::Rolled<true>{});
  ring_cls[S - 1] = ring_key[S - 1] = -1;

  cp_async_wait<2 * (S - 1)>();  // Q has landed (this thread's part)
  __syncthreads();               // ... and everybody's

  const unsigned q_off = (lane & 15) * kRowBytes + (lane >> 4) * 16;
  const unsigned k_lane = ((lane & 7) + ((lane >> 4) << 3)) * kRowBytes + ((lane >> 3) & 1) * 16;
  const unsigned v_lane = (lane & 15) * kRowBytes + (lane >> 4) * 16;
  const detail::SmemFragments<false> q_frag{sQ, q_off, kRowBytes};
  unsigned qf[Cfg::kQInRegs ? KD : 1][1][4];  // [k16 step][m16 tile], as warp_mma takes them
  if constexpr (Cfg::kQInRegs) {
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) q_frag.load(kk, 0, qf[kk][0]);
  }

  float o[1][ND][4];
  float m_run[1][2], l_run[1][2];
  detail::zero_fragments(o);
  m_run[0][0] = m_run[0][1] = neg_inf();
  l_run[0][0] = l_run[0][1] = 0.f;
  const float factor = Mods::kHasScoreMod ? 1.f : a.scale_log2;

  int slot = 0;
#pragma unroll 1
  while (ring_cls[0] >= 0) {
    const int cls = ring_cls[0];
    const int key = ring_key[0];
    cp_async_wait<2 * S - 3>();  // K of the current chunk has landed (this lane's part)
    __syncwarp();                // ... and the warp's; the slot consumed last time is free
    issue(slot == 0 ? S - 1 : slot - 1, ring_cls[S - 1], ring_key[S - 1], detail::Rolled<false>{});

    // ---- S = Q K^T
    float s[1][NN][4];
    const detail::SmemFragments<false> k_frag{sRing + slot * kSlotBytes + k_lane, 0, kRowBytes};
    detail::zero_fragments(s);
    detail::warp_mma<kBf16, KD>(s, detail::regs_or_smem<Cfg::kQInRegs>(qf, q_frag), k_frag);

    // ---- mods, online softmax, P to 16 bits
    if (Mods::kHasMask && cls == PARTIAL) {
      detail::decode_logits<Mods, Mods::kHasMask>(s, ctx_a, ctx_b, b, head, token, row_ok, key, t, a.scale);
    } else {
      detail::decode_logits<Mods, false>(s, ctx_a, ctx_b, b, head, token, row_ok, key, t, a.scale);
    }
    detail::online_softmax_step(s, o, m_run, l_run, factor);
    unsigned pa[KN][1][4];
    detail::pack_probabilities<kBf16>(s, pa);

    cp_async_wait<2 * S - 2>();  // V of the current chunk has landed
    __syncwarp();

    // ---- O += P V
    const detail::SmemFragments<true> v_frag{sRing + slot * kSlotBytes + kChunkBytes + v_lane, 0, kRowBytes};
    detail::warp_mma<kBf16, KN>(o, pa, v_frag);

#pragma unroll
    for (int s2 = 0; s2 < S - 1; ++s2) {
      ring_cls[s2] = ring_cls[s2 + 1];
      ring_key[s2] = ring_key[s2 + 1];
    }
    ring_cls[S - 1] = ring_key[S - 1] = -1;
    slot = slot + 1 == S ? 0 : slot + 1;
  }

  // ---- merge the warps: each writes its rows' running max, sum and O (fp32) over the rings.
  const bool any_bad = __syncthreads_or(bad);  // also: every warp is done with its ring
  float* merge_o = reinterpret_cast<float*>(flexjit_smem + R * kRowBytes);
  float* merge_m = merge_o + W * R * D;
  float* merge_l = merge_m + W * R;
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int row = g + 8 * hf;
    const float l = quad_sum(l_run[0][hf]);
    if (t == 0) {
      merge_m[warp * R + row] = m_run[0][hf];
      merge_l[warp * R + row] = l;
    }
    float* dst = merge_o + (warp * R + row) * D + 2 * t;
#pragma unroll
    for (int nd = 0; nd < ND; ++nd) {
      dst[nd * 8] = o[0][nd][2 * hf];
      dst[nd * 8 + 1] = o[0][nd][2 * hf + 1];
    }
  }
  __syncthreads();

  // Thread tid merges columns [part * CW, + CW) of packed row tid / 8.
  constexpr int kParts = kThreads / R;
  constexpr int CW = D / kParts;
  static_assert(D % (2 * kParts) == 0, "each thread merges whole column pairs");
  const int row = tid / kParts;
  const int part = tid % kParts;
  if (row >= nrows) return;
  float m = neg_inf();
#pragma unroll
  for (int w = 0; w < W; ++w) m = fmax2(m, merge_m[w * R + row]);
  const float m_base = m == neg_inf() ? 0.f : m;
  float weight[W], l = 0.f;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    weight[w] = fast_exp2(merge_m[w * R + row] - m_base);  // 0 for a warp that kept nothing
    l += merge_l[w * R + row] * weight[w];
  }
  float acc[CW];
#pragma unroll
  for (int c = 0; c < CW; ++c) {
    acc[c] = 0.f;
#pragma unroll
    for (int w = 0; w < W; ++w) acc[c] += merge_o[(w * R + row) * D + part * CW + c] * weight[w];
  }

  const int h = head_of(row), q = token_of(row);
  float lse;
  const float inv = detail::decode_row_scale<Mods>(p, b, h, m, l, a.splits == 1, any_bad, lse);
  if (a.splits == 1) {
    unsigned short* gO = static_cast<unsigned short*>(a.o) + b * a.o_b + h * a.o_h + q * a.o_t + part * CW;
#pragma unroll
    for (int c = 0; c < CW; c += 2)
      *reinterpret_cast<unsigned*>(gO + c) = pack2<kBf16>(acc[c] * inv, acc[c + 1] * inv);
    if (a.lse != nullptr && part == 0) a.lse[(static_cast<i64>(b) * a.Hq + h) * a.Tq + q] = lse;
  } else {
    // A partial row: normalised O and its LSE without the sink (decode_combine adds it once).
    const i64 part_row = ((static_cast<i64>(split) * a.B + b) * a.Hq + h) * a.Tq + q;
    float* dst = a.part_o + part_row * D + part * CW;
#pragma unroll
    for (int c = 0; c < CW; c += 2) *reinterpret_cast<float2*>(dst + c) = make_float2(acc[c] * inv, acc[c + 1] * inv);
    if (part == 0) a.part_lse[part_row] = lse;
  }
}

// ---------------------------------------------------------------------------------------------
// Merges the splits' partial rows by their LSE (plus the learned sink, once), one warp per row.
template <class Mods, class Cfg>
__device__ __forceinline__ void decode_combine(const DecodeArgs& a, const typename Mods::Params& p) {
  constexpr int D = value_head_dim<Cfg>(0);  // out's columns
  constexpr bool kBf16 = Cfg::kIsBf16;
  const int lane = threadIdx.x & 31;
  const i64 rows = static_cast<i64>(a.B) * a.Hq * a.Tq;
  const i64 row = static_cast<i64>(blockIdx.x) * decode::kCombineRows + (threadIdx.x >> 5);
  if (row >= rows) return;
  const int q = static_cast<int>(row % a.Tq);
  const int h = static_cast<int>((row / a.Tq) % a.Hq);
  const int b = static_cast<int>(row / (static_cast<i64>(a.Tq) * a.Hq));

  // In the log2 domain. fmax2 passes over a NaN partial, whose weight then carries it on.
  float m = neg_inf();
  for (int s = 0; s < a.splits; ++s) m = fmax2(m, a.part_lse[s * rows + row] * kLog2e);
  float sink2 = neg_inf();
  if constexpr (Mods::kHasSink) sink2 = Mods::sink(p, b, h) * kLog2e;
  const float mf = fmax2(m, sink2);
  const float mb = mf == neg_inf() ? 0.f : mf;
  float l = fast_exp2(sink2 - mb);  // 0 without a sink
  for (int s = 0; s < a.splits; ++s) l += fast_exp2(a.part_lse[s * rows + row] * kLog2e - mb);
  const bool any = l != 0.f;
  const float inv = any ? 1.f / l : 0.f;
  unsigned short* gO = static_cast<unsigned short*>(a.o) + b * a.o_b + h * a.o_h + q * a.o_t;
  for (int d = lane; d < D; d += 32) {
    float acc = 0.f;
    for (int s = 0; s < a.splits; ++s)
      acc += a.part_o[(s * rows + row) * D + d] * fast_exp2(a.part_lse[s * rows + row] * kLog2e - mb);
    gO[d] = from_float<kBf16>(acc * inv);
  }
  if (a.lse != nullptr && lane == 0) a.lse[row] = any ? (mb + fast_log2(l)) * kLn2 : neg_inf();
}

}  // namespace flexjit

// flexjit: decode with a value head dim of its own (sm_80+, mma.sync m16n8k16, cp.async, ldmatrix):
// multi-head latent attention's absorbed form (q and k of 576 columns, v the first 512 columns of
// k's rows, read once from the same shared-memory rows) and q, k of 192 with v of 128. The
// decode family's kernel (decode/attention_decode.cuh) gives every warp its own chunks and the
// whole head dim; at these widths a warp cannot hold the output of its rows, so here the warps
// share each chunk instead:
//
//   1. logits: S = Q K^T of the chunk's 32 keys, split over the warps by (m16 tile, key half) and,
//      when there are fewer than four m16 tiles of rows, by slices of the head dim, each warp's
//      partial sums into its own slot of the logits array;
//   2. softmax: four threads per packed row add the slots, apply the mods (the kv range and the
//      chunk classes of the decode family, mask, score mod) and the online softmax, and write
//      the 16-bit probabilities and the row's rescale factor;
//   3. O += P V: each warp owns DV / 8 output columns of every row, rescaled by the factor.
//
// A CTA packs up to decode_mla::kRows (query head, new token) rows of one kv head (head-major: row
// r is head hk * group + r / Tq, token r % Tq), so that MLA's 16-128 query heads read each key
// row once per 64 of them. The ring holds `stages` chunks of K rows (and V rows where v has storage
// of its own: a.v_in_k = 0); a.v_in_k = 1 (the host found v to be k's first DV columns) reads v
// from the K rows. Split-KV and decode_combine as the decode family does. A plain forward call
// (null kv_lens) gives every sequence a.Tkv keys. Token lists (TokenIndices: DeepSeek's sparse
// attention at MLA's head dims) as the decode family takes them (decode/token_list.cuh): a CTA's
// rows are query heads of one new token (token-major), which share its list, and the chunks are
// the list's keys, sorted.
//
// The generator wraps it as:
//   extern "C" __global__ void __launch_bounds__(Cfg::kThreads, 1)
//   flexjit_decode_mla(const __grid_constant__ flexjit::DecodeArgs args,
//                      const __grid_constant__ Mods::Params params) {
//     flexjit::attention_decode_mla<Mods, Cfg>(args, params);
//   }
// launched with grid (splits, Hkv * row_groups, B), block Cfg::kThreads, dynamic shared memory
// Cfg::kSmemBytes; decode_combine as for the decode family.
#pragma once

#include "decode/attention_decode.cuh"
#include "decode/mla_tiles.cuh"

namespace flexjit {

namespace detail {
// A column count as a type, for the generic lambda that copies rows of either width.
template <int N>
struct Columns {
  static constexpr int value = N;
};
}  // namespace detail

// kTokenList_: a program with token lists, whose shared memory keeps the listed keys after the
// rest (at kTokenListOffset); while a list is sorted, the ring holds it and the warps' sums.
template <int kHeadDim_, int kHeadDimV_, int kStages_, bool kSeparateV_, class Element_, bool kTokenList_ = false>
struct DecodeMlaConfig : WarpTileConfig<kHeadDim_, decode_mla::kRows, decode_mla::kBlockN, decode_mla::kWarps,
                                        kStages_, Element_> {
  static constexpr int kHeadDimV = kHeadDimV_;
  static constexpr bool kSeparateV = kSeparateV_;
  static constexpr int kMaxTokenList = kTokenList_ ? decode::max_token_list() : 0;
  static constexpr int kTokenListOffset = decode_mla::smem_bytes(kHeadDim_, kHeadDimV_, kStages_, kSeparateV_);
  static constexpr int kSmemBytes = decode_mla::smem_bytes(kHeadDim_, kHeadDimV_, kStages_, kSeparateV_,
                                                           kTokenList_ ? decode::decode_token_list_bytes() : 0);
  static_assert(kStages_ * decode_mla::slot_bytes(kHeadDim_, kHeadDimV_, kSeparateV_) >=
                    (kMaxTokenList + decode_mla::kWarps) * 4,
                "the ring holds a whole list and the warps' sums while it is sorted");
};

template <class Mods, class Cfg>
__device__ __forceinline__ void attention_decode_mla(const DecodeArgs& a, const typename Mods::Params& p) {
  constexpr int D = Cfg::kHeadDim;
  constexpr int DV = Cfg::kHeadDimV;
  constexpr int BN = Cfg::kBlockN;
  constexpr int S = Cfg::kStages;
  constexpr int W = Cfg::kWarps;
  constexpr int R = Cfg::kBlockM;
  constexpr int kThreads = Cfg::kThreads;
  constexpr bool kBf16 = Cfg::kIsBf16;
  constexpr int KD = D / 16;          // k16 steps of Q K^T
  constexpr int MT = R / 16;          // m16 tiles of rows
  constexpr int kWarpCols = DV / W;   // output columns per warp
  constexpr int NO = kWarpCols / 8;   // n8 tiles per warp
  constexpr int kRowBytes = decode_mla::row_bytes(D);
  constexpr int kVRowBytes = Cfg::kSeparateV ? decode_mla::row_bytes(DV) : kRowBytes;
  constexpr int kKChunkBytes = BN * kRowBytes;
  constexpr int kSlotBytes = decode_mla::slot_bytes(D, DV, Cfg::kSeparateV);
  constexpr int LS = decode_mla::kLogitStride;
  constexpr int kProbRowBytes = decode_mla::kProbStride * 2;
  static_assert(D % 16 == 0 && D <= decode_mla::kMaxHeadDim, "q and k: a multiple of 16 up to 576 columns");
  static_assert(DV % (16 * W) == 0 && DV <= decode_mla::kMaxHeadDimV, "v: a multiple of 128 up to 512 columns");
  static_assert(BN == 32 && W == 8 && R == 64 && S >= 2, "two key halves of 16, four m16 tiles, eight warps");
  constexpr bool kTokens = detail::token_list_of<Mods>(0);
  static_assert(!detail::BlockListOf<Mods>::value, "block lists run on the decode family's kernel");
  static_assert(!kTokens || Cfg::kMaxTokenList > 0, "token lists take the config with room for the list");

  extern __shared__ __align__(128) unsigned char flexjit_smem[];
  const unsigned sQ = smem_u32(flexjit_smem);
  const unsigned sRing = sQ + decode_mla::q_bytes(D);
  float* const logits = reinterpret_cast<float*>(flexjit_smem + decode_mla::q_bytes(D) + S * kSlotBytes);
  const unsigned sProbs = smem_u32(logits + R * LS);
  float* const row_factor = reinterpret_cast<float*>(flexjit_smem + decode_mla::q_bytes(D) + S * kSlotBytes +
                                                     decode_mla::logits_bytes() + decode_mla::probs_bytes());
  float* const row_scale = row_factor + R;

  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int t = lane & 3;
  if (!detail::decode_slot_exists(a)) return;
  const int split = detail::decode_split(a);
  const int b = blockIdx.z;
  const detail::PackedRows<kTokens> rows(a);  // head-major; token-major with token lists
  const int hk = rows.hk, nrows = rows.nrows;
  auto head_of = [&](int r) { return rows.head_of(r); };
  auto token_of = [&](int r) { return rows.token_of(r); };
  // The m16 tiles that hold rows; the logits' work units are (m16 tile, key half) pairs, and
  // `parts` warps share a unit by slices of the head dim when there are fewer than W units.
  const int tiles = (nrows + 15) / 16;
  const int units = 2 * tiles;
  const int parts = W / units;
  const int rows_used = 16 * tiles;

  const detail::CachedSequence seq = detail::decode_sequence<true, kThreads>(a.cache, a.Tkv, b, tid, split == 0);
  const int len = seq.len;
  bool bad = seq.bad;
  const bool paged = seq.pages != nullptr;
  const int* pt_row = seq.pages;

  // ---- Q: the packed rows into shared memory (rows >= nrows zero-filled); its own commit group.
  {
    const unsigned short* gq = static_cast<const unsigned short*>(a.q) + b * a.q_b;
    constexpr int kVectors = R * (D / 8);
#pragma unroll 4
    for (int i = tid; i < kVectors; i += kThreads) {
      const int r = i / (D / 8), ch = i % (D / 8);
      const bool ok = r < nrows;
      const unsigned short* src = ok ? gq + head_of(r) * a.q_h + token_of(r) * a.q_t + ch * 8 : gq;
      cp_async_16(sQ + r * kRowBytes + ch * 16, src, ok);
    }
    cp_async_commit();
  }

  // ---- this thread's softmax row (four threads a row) and its per-CTA values of the mods.
  const int srow = tid >> 2;
  const int scol = (tid & 3) * 8;
  const bool srow_ok = srow < nrows;
  const int shead = head_of(srow_ok ? srow : 0);
  const int stoken = token_of(srow_ok ? srow : 0);
  const typename detail::CtaOf<Mods>::type ctx = detail::CtaOf<Mods>::make(p, b, shead);

  // ---- the keys any packed row can attend to: the union of each packed head's kv range.
  int lo, hi;
  detail::packed_kv_range<Mods>(p, b, rows, len, lo, hi);
  auto classify = [&](int k0, int k1) { return detail::packed_chunk_class<Mods>(p, b, rows, k0, k1); };

  // ---- chunks: chunk c holds keys [base + c * BN, + BN) of the kv range or, with token lists,
  // keys [c * BN, + BN) of the CTA's token's list (every row's: the host packs heads of one token),
  // sorted in the ring (free until the first chunk is issued) into token_keys; this split's share.
  const int base = (lo / BN) * BN;
  int chunks = hi > lo ? (hi - base + BN - 1) / BN : 0;
  int token_count = 0;
  const int* token_keys = nullptr;
  if constexpr (kTokens) {
    int* keys = reinterpret_cast<int*>(flexjit_smem + Cfg::kTokenListOffset);
    int* scratch = reinterpret_cast<int*>(flexjit_smem + decode_mla::q_bytes(D));
    token_count = detail::gather_token_list<Mods, kThreads>(p, b, rows.h_first, token_of(0), len, lo, hi, scratch,
                                                            scratch + Cfg::kMaxTokenList, keys, tid, bad);
    token_keys = keys;
    chunks = (token_count + BN - 1) / BN;
  }
  // Key r of chunk c, or -1 (outside the range, past the list).
  auto chunk_key = [&](int c, int r) {
    if constexpr (kTokens) {
      const int i = c * BN + r;
      return i < token_count ? token_keys[i] : -1;  // in [lo, hi) and the sequence already
    } else {
      const int key = base + c * BN + r;
      return key >= lo && key < hi ? key : -1;
    }
  };
  const int per_split = (chunks + a.splits - 1) / a.splits;
  const int c_begin = min2(chunks, split * per_split);
  const int c_end = min2(chunks, c_begin + per_split);

  const bool v_from_k = !Cfg::kSeparateV || a.v_in_k != 0;
  const unsigned short* gK = static_cast<const unsigned short*>(a.k) + (paged ? 0 : b * a.k_b) + hk * a.k_h;
  const unsigned short* gV = static_cast<const unsigned short*>(a.v) + (paged ? 0 : b * a.v_b) + hk * a.v_h;

  // The rows of one chunk from k or v (COLS columns each, row r the chunk's key r): every thread
  // copies its share of 16-byte vectors; a row without a key (outside the range, or on a bad page)
  // is zero-filled.
  auto copy_rows = [&](unsigned s_rows, int row_bytes, const unsigned short* g_base, long long b_stride,
                       long long t_stride, int chunk, auto cols) {
    constexpr int kPerRow = decltype(cols)::value / 8;
#pragma unroll 4
    for (int i = tid; i < BN * kPerRow; i += kThreads) {
      const int r = i / kPerRow, ch = i % kPerRow;
      const int key = chunk_key(chunk, r);
      bool ok = key >= 0;
      long long offset = 0;
      if (ok && paged) {
        const int page = detail::page_of(a.cache, pt_row, key);
        if (page < 0 || page >= a.cache.num_pages) {
          bad = true;
          ok = false;
        } else {
          offset = page * b_stride + (key % a.cache.page_size) * t_stride;
        }
      } else if (ok) {
        offset = key * t_stride;
      }
      cp_async_16(s_rows + r * row_bytes + ch * 16, ok ? g_base + offset + ch * 8 : g_base, ok);
    }
  };
  // Issues the split's next chunk that is not EMPTY into `slot`: one commit group (an empty one
  // when none is left, so that the wait counts stay fixed). Gives its class (-1: none) and index.
  int next = c_begin;
  auto issue = [&](int slot, int& cls, int& chunk) {
    cls = -1;
#pragma unroll 1
    for (; next < c_end; ++next) {
      if constexpr (kTokens) cls = Mods::kHasMask ? PARTIAL : FULL;  // the mask applies per listed key
      else cls = classify(max2(base + next * BN, lo), min2(base + next * BN + BN, hi));
      if (cls != EMPTY) break;
      cls = -1;
    }
    if (cls >= 0) {
      chunk = next++;
      const unsigned s_slot = sRing + slot * kSlotBytes;
      copy_rows(s_slot, kRowBytes, gK, a.k_b, a.k_t, chunk, detail::Columns<D>{});
      if constexpr (Cfg::kSeparateV)
        if (!v_from_k) copy_rows(s_slot + kKChunkBytes, kVRowBytes, gV, a.v_b, a.v_t, chunk, detail::Columns<DV>{});
    }
    cp_async_commit();
  };

  int ring_cls[S], ring_chunk[S];
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s, ring_cls[s], ring_chunk[s]);
  ring_cls[S - 1] = ring_chunk[S - 1] = -1;

  // Fragment addresses (decode/attention_decode.cuh's): Q and P as A, K as B, V as transposed B.
  const unsigned a_lane = (lane & 15) * kRowBytes + (lane >> 4) * 16;
  const unsigned p_lane = (lane & 15) * kProbRowBytes + (lane >> 4) * 16;
  const unsigned k_lane = ((lane & 7) + ((lane >> 4) << 3)) * kRowBytes + ((lane >> 3) & 1) * 16;
  const unsigned v_lane_k = (lane & 15) * kRowBytes + (lane >> 4) * 16;
  const unsigned v_lane_v = (lane & 15) * kVRowBytes + (lane >> 4) * 16;
  const detail::SmemFragments<false> q_frag{sQ, a_lane, kRowBytes};
  const detail::SmemFragments<false> p_frag{sProbs, p_lane, kProbRowBytes};

  // This warp's unit of the logits (warps past units * parts have none).
  const int unit = warp / parts;
  const int part = warp % parts;
  const bool has_unit = warp < units * parts;
  const int mt_s = unit >> 1, half = unit & 1;
  const int k_begin = part * KD / parts, k_end = (part + 1) * KD / parts;

  float o[MT][NO][4];
  detail::zero_fragments(o);
  float m_run = neg_inf(), l_run = 0.f;  // the softmax row's, the same in its four threads
  const float factor = Mods::kHasScoreMod ? 1.f : a.scale_log2;

  int slot = 0;
#pragma unroll 1
  while (ring_cls[0] >= 0) {
    const int cls = ring_cls[0], chunk = ring_chunk[0];
    cp_async_wait<S - 2>();  // this chunk (and Q) landed: this thread's copies
    __syncthreads();         // ... and everybody's; the slot of the previous chunk is free
    issue(slot == 0 ? S - 1 : slot - 1, ring_cls[S - 1], ring_chunk[S - 1]);
    const unsigned s_slot = sRing + slot * kSlotBytes;

    // ---- 1. partial logits of this warp's unit over its slice of the head dim.
    if (has_unit) {
      float s[2][4] = {};
      const detail::SmemFragments<false> k_frag{s_slot, k_lane, kRowBytes};
#pragma unroll 2
      for (int kk = k_begin; kk < k_end; ++kk) {
        unsigned qa[4], kb[4];
        q_frag.load(kk, mt_s, qa);
        k_frag.load(kk, half, kb);
        mma_16816<kBf16>(s[0], qa, kb[0], kb[1]);
        mma_16816<kBf16>(s[1], qa, kb[2], kb[3]);
      }
      float* dst = logits + (part * rows_used + mt_s * 16 + g) * LS + half * 16 + 2 * t;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        *reinterpret_cast<float2*>(dst + nt * 8) = make_float2(s[nt][0], s[nt][1]);
        *reinterpret_cast<float2*>(dst + 8 * LS + nt * 8) = make_float2(s[nt][2], s[nt][3]);
      }
    }
    __syncthreads();

    // ---- 2. the softmax rows: mods, online softmax (lazy rescale), 16-bit probabilities.
    if (srow < rows_used) {
      float x[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) x[j] = 0.f;
#pragma unroll 1
      for (int q = 0; q < parts; ++q) {
        const float* src = logits + (q * rows_used + srow) * LS + scol;
#pragma unroll
        for (int j = 0; j < 8; ++j) x[j] += src[j];
      }
      float mx = neg_inf();
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int key = chunk_key(chunk, scol + j);
        bool keep = srow_ok && key >= 0;
        if constexpr (Mods::kHasMask)
          if (cls == PARTIAL) keep = keep && Mods::mask(ctx, b, shead, stoken, key);
        if constexpr (Mods::kHasScoreMod) {
          x[j] = keep ? Mods::score(ctx, x[j] * a.scale, b, shead, stoken, key) * kLog2e : neg_inf();
        } else {
          x[j] = keep ? x[j] * factor : neg_inf();
        }
        mx = fmax2(mx, x[j]);
      }
      mx = quad_max(mx);
      const bool up = mx > m_run + detail::kRescaleSlack;
      const float corr = up ? fast_exp2(m_run - mx) : 1.f;
      m_run = up ? mx : m_run;
      const float m_base = m_run == neg_inf() ? 0.f : m_run;
      float rs = 0.f;
      unsigned packed[4];
#pragma unroll
      for (int j = 0; j < 8; j += 2) {
        const float p0 = fast_exp2(x[j] - m_base), p1 = fast_exp2(x[j + 1] - m_base);
        rs += p0 + p1;
        packed[j / 2] = pack2<kBf16>(p0, p1);
      }
      l_run = l_run * corr + quad_sum(rs);
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(sProbs + srow * kProbRowBytes + scol * 2),
                   "r"(packed[0]), "r"(packed[1]), "r"(packed[2]), "r"(packed[3]));
      if ((tid & 3) == 0) row_factor[srow] = corr;
    }
    __syncthreads();

    // ---- 3. O += P V over this warp's columns.
    const int col0 = warp * kWarpCols / 8;  // in units of 8 columns
    const detail::SmemFragments<true> v_frag =
        v_from_k ? detail::SmemFragments<true>{s_slot, v_lane_k, kRowBytes, col0}
                 : detail::SmemFragments<true>{s_slot + kKChunkBytes, v_lane_v, kVRowBytes, col0};
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      if (mt < tiles) {
        const float c0 = row_factor[mt * 16 + g], c1 = row_factor[mt * 16 + g + 8];
#pragma unroll
        for (int nt = 0; nt < NO; ++nt) {
          o[mt][nt][0] *= c0;
          o[mt][nt][1] *= c0;
          o[mt][nt][2] *= c1;
          o[mt][nt][3] *= c1;
        }
      }
    }
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      unsigned pa[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        if (mt < tiles) p_frag.load(kk, mt, pa[mt]);
#pragma unroll
      for (int np = 0; np < NO / 2; ++np) {
        unsigned vb[4];
        v_frag.load(kk, np, vb);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          if (mt < tiles) {
            mma_16816<kBf16>(o[mt][2 * np], pa[mt], vb[0], vb[1]);
            mma_16816<kBf16>(o[mt][2 * np + 1], pa[mt], vb[2], vb[3]);
          }
        }
      }
    }

#pragma unroll
    for (int s2 = 0; s2 < S - 1; ++s2) {
      ring_cls[s2] = ring_cls[s2 + 1];
      ring_chunk[s2] = ring_chunk[s2 + 1];
    }
    ring_cls[S - 1] = ring_chunk[S - 1] = -1;
    slot = slot + 1 == S ? 0 : slot + 1;
  }
  cp_async_wait<0>();

  // ---- the rows' normalisation (sink and LSE as the decode kernel's), by their softmax threads.
  const bool any_bad = __syncthreads_or(bad);  // also: every warp is done with the row factors
  if (srow_ok && (tid & 3) == 0) {
    float lse;
    const float inv = detail::decode_row_scale<Mods>(p, b, shead, m_run, l_run, a.splits == 1, any_bad, lse);
    row_scale[srow] = inv;
    if (a.splits == 1) {
      if (a.lse != nullptr) a.lse[(static_cast<i64>(b) * a.Hq + shead) * a.Tq + stoken] = lse;
    } else {
      a.part_lse[((static_cast<i64>(split) * a.B + b) * a.Hq + shead) * a.Tq + stoken] = lse;
    }
  }
  __syncthreads();

  // ---- this warp's columns of every row: out (16-bit), or a split's normalised partial (fp32).
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int row = mt * 16 + g + 8 * hf;
      if (mt >= tiles || row >= nrows) continue;
      const float inv = row_scale[row];
      const int h = head_of(row), q = token_of(row);
      const int c0 = warp * kWarpCols + 2 * t;
      if (a.splits == 1) {
        unsigned short* gO = static_cast<unsigned short*>(a.o) + b * a.o_b + h * a.o_h + q * a.o_t + c0;
#pragma unroll
        for (int nt = 0; nt < NO; ++nt)
          *reinterpret_cast<unsigned*>(gO + nt * 8) =
              pack2<kBf16>(o[mt][nt][2 * hf] * inv, o[mt][nt][2 * hf + 1] * inv);
      } else {
        const i64 part_row = ((static_cast<i64>(split) * a.B + b) * a.Hq + h) * a.Tq + q;
        float* dst = a.part_o + part_row * DV + c0;
#pragma unroll
        for (int nt = 0; nt < NO; ++nt)
          *reinterpret_cast<float2*>(dst + nt * 8) =
              make_float2(o[mt][nt][2 * hf] * inv, o[mt][nt][2 * hf + 1] * inv);
      }
    }
  }
}

}  // namespace flexjit

// flexjit: multi-head latent attention's absorbed decode and token-level sparse attention on Hopper
// (sm_90a, family sm90_mla): q and k of 576 columns, v the first 512 columns of k's rows, up to 64
// packed (query head, token) rows of one kv head per CTA (decode/attention_decode_mla.cuh packs
// them the same way), the keys walked in chunks of 64 (decode/mla_sm90_tiles.cuh).
//
// Three warpgroups:
//   - the producer (warpgroup 0, few registers) gathers rows with cp.async into the 128-byte
//     swizzled layout wgmma reads: Q once, then each chunk's 64 key rows (a row per listed key,
//     through the page table where paged; zero-filled where there is no key) into one of two
//     chunk buffers, each buffer in two halves (the column blocks of v's first 256 columns, and
//     the rest) with an mbarrier each, so that a half is refilled as soon as its readers are done;
//     it also writes each chunk's keys (-1: none) and class for the consumers;
//   - consumer 0 makes S = Q K^T of the even chunks (buffer 0), consumer 1 of the odd ones
//     (buffer 1), both with operands in shared memory (wgmma m64n64k16); each applies the mods
//     (mask, score mod, the kv range and token list's keys) on its accumulator fragment;
//   - consumer c keeps output columns [256c, 256c + 256) of every row and adds P V of both chunks
//     of a pair: its own chunk's P from registers, the other's from shared memory (P of chunk 0 in
//     buffer 0's last column block, k's rope columns, which only Q K^T reads).
// The two share one running max per row: consumer 0 publishes its chunk's max, consumer 1 raises it
// by its own and publishes the result, and consumer 0 rescales its P (kept in fp32) to that before
// storing it; named barriers order the four hand-offs of a pair (max 0, max 1, P 0, P 1).
//
// Token lists (TokenIndices, DeepSeek's sparse attention): the rows of a CTA are the query heads of
// one token, sharing its list. Before the walk every thread takes part in marking each listed key's
// first entry (a hash table in the chunk buffers, then one bit per entry, and a count per 32
// entries); chunk c then holds the kept entries ranked [64c, 64c + 64), found by the producer from
// the bits. Work is proportional to the kept entries, not to the sequence; an entry below -1 or past
// the sequence makes the CTA's rows NaN, as the decode kernels do.
//
// Split-KV and decode_combine as the decode family's. The generator wraps it as
//   extern "C" __global__ void __launch_bounds__(Cfg::kThreads, 1)
//   flexjit_decode_mla_sm90(const __grid_constant__ flexjit::DecodeArgs args,
//                           const __grid_constant__ Mods::Params params) {
//     flexjit::attention_decode_mla_sm90<Mods, Cfg>(args, params);
//   }
// launched with grid (splits, Hkv * row_groups, B) (folded as the decode family's), block
// Cfg::kThreads, dynamic shared memory Cfg::kSmemBytes.
#pragma once

#include "decode/attention_decode.cuh"
#include "decode/mla_sm90_tiles.cuh"
#include "sm90/ptx.cuh"
#include "sm90/wgmma_ops.cuh"

namespace flexjit {

template <class Element_, bool kTokenList_ = false>
struct DecodeMlaSm90Config : TileConfigBase<decode_mla_sm90::kHeadDim, decode_mla_sm90::kRows,
                                            decode_mla_sm90::kBlockN, 2, Element_> {
  static constexpr int kHeadDimV = decode_mla_sm90::kHeadDimV;
  static constexpr int kThreads = decode_mla_sm90::kThreads;
  static constexpr int kSmemBytes = decode_mla_sm90::Layout().bytes();
  static constexpr bool kTokenList = kTokenList_;
};

namespace detail {

// The slot of `key` in the marking table (2 * kMaxTokenList slots, open addressing).
__device__ __forceinline__ unsigned mla_sm90_slot(int key) {
  constexpr int kBits = 13;  // log2(2 * kMaxTokenList)
  static_assert((1 << kBits) == 2 * decode_mla_sm90::kMaxTokenList, "the table's size");
  return (static_cast<unsigned>(key) * 2654435761u) >> (32 - kBits);
}

// Marks the first entry of each key in [lo, hi) of the token list of (b, h, token): bit i of
// `bits` for entry i, and ranks[w] = the marked entries before word w (ranks[kMaxTokenList / 32]:
// all of them, returned). `table_keys` and `table_entries` are 2 * kMaxTokenList ints of shared
// memory free until this returns. Sets `bad` for an entry below -1 or at or past `len`. Every
// thread of the CTA calls it; ends with a barrier.
template <class Mods, int NTHREADS>
__device__ __forceinline__ int mla_sm90_mark_token_list(const typename Mods::Params& p, int b, int h, int token,
                                                        int len, int lo, int hi, int* table_keys, int* table_entries,
                                                        unsigned* bits, unsigned short* ranks, int tid, bool& bad) {
  constexpr int kSlots = 2 * decode_mla_sm90::kMaxTokenList;
  constexpr int kWords = decode_mla_sm90::kMaxTokenList / 32;
  const int K = Mods::token_list_length(p);  // 1 <= K <= kMaxTokenList (checked by the host)
  for (int i = tid; i < kSlots; i += NTHREADS) {
    table_keys[i] = -1;
    table_entries[i] = 0x7fffffff;
  }
  __syncthreads();
  for (int i = tid; i < K; i += NTHREADS) {
    const int key = Mods::token_list_entry(p, b, h, token, i);
    bad = bad || key < -1 || key >= len;
    if (key < lo || key >= hi) continue;  // lo >= 0: -1 too
    unsigned s = mla_sm90_slot(key);
#pragma unroll 1
    for (;;) {
      const int old = atomicCAS(table_keys + s, -1, key);
      if (old == -1 || old == key) break;
      s = (s + 1) & (kSlots - 1);
    }
    atomicMin(table_entries + s, i);
  }
  __syncthreads();
  const int warp = tid >> 5, lane = tid & 31;
  for (int w = warp; w < (K + 31) / 32; w += NTHREADS / 32) {
    const int i = w * 32 + lane;
    bool first = false;
    if (i < K) {
      const int key = Mods::token_list_entry(p, b, h, token, i);
      if (key >= lo && key < hi) {
        unsigned s = mla_sm90_slot(key);
#pragma unroll 1
        while (table_keys[s] != key) s = (s + 1) & (kSlots - 1);
        first = table_entries[s] == i;
      }
    }
    const unsigned word = __ballot_sync(0xffffffffu, first);
    if (lane == 0) bits[w] = word;
  }
  __syncthreads();
  if (warp == 0) {
    // Four words a lane, then a scan over the lanes.
    const int words = (K + 31) / 32;
    int counts[kWords / 32];
    int sum = 0;
#pragma unroll
    for (int q = 0; q < kWords / 32; ++q) {
      const int w = lane * (kWords / 32) + q;
      counts[q] = w < words ? __popc(bits[w]) : 0;
      sum += counts[q];
    }
    int inclusive = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const int x = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (lane >= d) inclusive += x;
    }
    int before = inclusive - sum;
#pragma unroll
    for (int q = 0; q < kWords / 32; ++q) {
      ranks[lane * (kWords / 32) + q] = static_cast<unsigned short>(before);
      before += counts[q];
    }
    if (lane == 31) ranks[kWords] = static_cast<unsigned short>(inclusive);
  }
  __syncthreads();
  return ranks[kWords];
}

// The entry of the list whose marked rank is r (0 <= r < the marked count).
__device__ __forceinline__ int mla_sm90_entry_of_rank(const unsigned* bits, const unsigned short* ranks, int words,
                                                      int r) {
  int lo = 0, hi = words;  // the last word whose rank is <= r
#pragma unroll 1
  while (hi - lo > 1) {
    const int mid = (lo + hi) >> 1;
    if (ranks[mid] <= r) lo = mid;
    else hi = mid;
  }
  unsigned w = bits[lo];
  int k = r - ranks[lo];
  int pos = 0;
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) {
    const int c = __popc(w & ((1u << s) - 1u));
    if (k >= c) {
      k -= c;
      w >>= s;
      pos += s;
    }
  }
  return lo * 32 + pos;
}

// exp2(m_old - m_new), the factor that takes values at max m_old to max m_new (1 while nothing is kept).
__device__ __forceinline__ float mla_sm90_rebase(float m_old, float m_new) {
  return m_new == neg_inf() ? 1.f : fast_exp2(m_old - m_new);
}

}  // namespace detail

template <class Mods, class Cfg>
__device__ __forceinline__ void attention_decode_mla_sm90(const DecodeArgs& a, const typename Mods::Params& p) {
  namespace L = decode_mla_sm90;
  constexpr int D = L::kHeadDim;
  constexpr int BN = L::kBlockN;
  constexpr int R = L::kRows;
  constexpr int KB = D / 64;                     // column blocks of q and k
  constexpr int kHalfV = L::kHeadDimV / 2;       // output columns of a consumer
  constexpr int kHalfBlocks = kHalfV / 64;       // column blocks of a buffer's first half
  constexpr int NN = BN / 8;                     // n8 blocks of S
  constexpr int KN = BN / 16;                    // k16 steps of P V
  constexpr unsigned kBlk = L::kColumnBlockBytes;
  constexpr unsigned kRowBytes = L::kSwizzleBytes;
  constexpr bool kBf16 = Cfg::kIsBf16;
  constexpr bool kTokens = detail::token_list_of<Mods>(0);
  constexpr L::Layout kL{};
  static_assert(Cfg::kHeadDim == D && value_head_dim<Cfg>(0) == L::kHeadDimV, "q, k of 576 and v of 512");
  static_assert(Cfg::kTokenList == kTokens, "the config of a program with token lists says so");
  static_assert(!detail::BlockListOf<Mods>::value, "block lists run on the decode family's kernel");
  // Named barriers (0 is __syncthreads): the pair's hand-offs between the consumers, their end, and
  // the producer's keys of a buffer, to its threads.
  constexpr int kMax0 = 1, kMax1 = 2, kP0 = 3, kP1 = 4, kEnd = 5, kProducerKeys = 6;

  extern __shared__ __align__(1024) unsigned char flexjit_smem[];
  const unsigned raw = smem_u32(flexjit_smem);
  const unsigned smem0 = (raw + L::kTileAlign - 1) & ~unsigned(L::kTileAlign - 1);
  unsigned char* const base_ptr = flexjit_smem + (smem0 - raw);
  const unsigned sQ = smem0 + kL.q();
  auto sChunk = [&](int c) { return smem0 + kL.chunk(c); };
  auto sP = [&](int c) { return smem0 + kL.p(c); };
  auto full = [&](int c, int half) { return smem0 + kL.full(c, half); };
  auto empty = [&](int c, int half) { return smem0 + kL.empty(c, half); };
  auto keys_of = [&](int c) { return reinterpret_cast<int*>(base_ptr + kL.keys(c)); };
  auto class_of = [&](int c) { return reinterpret_cast<volatile int*>(base_ptr + kL.chunk_class(c)); };
  auto row_max = [&](int c) { return reinterpret_cast<float*>(base_ptr + kL.row_max(c)); };
  volatile int* const bad_flag = reinterpret_cast<volatile int*>(base_ptr + kL.bad());
  unsigned* const token_bits = reinterpret_cast<unsigned*>(base_ptr + kL.token_bits());
  unsigned short* const token_ranks = reinterpret_cast<unsigned short*>(base_ptr + kL.token_ranks());

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  if (!detail::decode_slot_exists(a)) return;
  const int split = detail::decode_split(a);
  const int b = blockIdx.z;
  const detail::PackedRows<kTokens> rows(a);  // head-major; token-major with token lists
  const int hk = rows.hk, nrows = rows.nrows;

  const detail::CachedSequence seq = detail::decode_sequence<true, L::kThreads>(a.cache, a.Tkv, b, tid, split == 0);
  const int len = seq.len;
  bool bad = seq.bad;
  int lo, hi;
  detail::packed_kv_range<Mods>(p, b, rows, len, lo, hi);
  const int base = (lo / BN) * BN;
  int chunks = hi > lo ? (hi - base + BN - 1) / BN : 0;

  if (tid == 0) {
    sm90::mbarrier_init(smem0 + kL.q_full(), 128);  // the producer's threads, once their copies land
#pragma unroll
    for (int c = 0; c < 2; ++c)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        sm90::mbarrier_init(full(c, half), 256);  // each producer thread: its copies landed, and its keys
        sm90::mbarrier_init(empty(c, half), 4);   // the warps of the consumer that reads the half last
      }
    sm90::mbarrier_init_fence();
    *bad_flag = 0;
  }
  int listed = 0;  // token lists: the marked entries
  if constexpr (kTokens) {
    int* table = reinterpret_cast<int*>(base_ptr + kL.chunk(0));  // the buffers, free until the walk
    listed = detail::mla_sm90_mark_token_list<Mods, L::kThreads>(p, b, rows.h_first, rows.token_of(0), len, lo, hi,
                                                                 table, table + 2 * L::kMaxTokenList, token_bits,
                                                                 token_ranks, tid, bad);
    chunks = (listed + BN - 1) / BN;
  }
  const bool bad_before = __syncthreads_or(bad);  // also: the barriers are initialised

  const int per_split = (chunks + a.splits - 1) / a.splits;
  const int c_begin = min2(chunks, split * per_split);
  const int C = min2(chunks, c_begin + per_split) - c_begin;  // this split's chunks
  const int pairs = (C + 1) / 2;

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    sm90::registers_release<L::kProducerRegisters>();
    const int grp = tid >> 3, i8 = tid & 7;  // rows grp + 16 j of each tile, 16-byte vector i8 of each block
    const bool paged = seq.pages != nullptr;
    const unsigned short* gK = static_cast<const unsigned short*>(a.k) + (paged ? 0 : b * a.k_b) + hk * a.k_h;
    auto swizzled = [&](unsigned tile, int cb, int r) { return tile + cb * kBlk + r * kRowBytes + ((i8 ^ (r & 7)) << 4); };
    // Q is read by this CTA alone (evict first); each key row by every row group of its token or
    // sequence, which run side by side (evict last, load_half).
    const unsigned long long q_policy = sm90::l2_policy_evict_first();
    {
      const unsigned short* gq = static_cast<const unsigned short*>(a.q) + b * a.q_b;
#pragma unroll
      for (int j = 0; j < R / 16; ++j) {
        const int r = grp + 16 * j;
        const bool ok = r < nrows;
        const unsigned short* src = ok ? gq + rows.head_of(r) * a.q_h + rows.token_of(r) * a.q_t : gq;
#pragma unroll
        for (int cb = 0; cb < KB; ++cb)
          sm90::cp_async_16_prefetch_256(swizzled(sQ, cb, r), src + cb * 64 + i8 * 8, ok, q_policy);
      }
      sm90::cp_async_mbarrier_arrive(smem0 + kL.q_full());
    }
    int words = 0;  // of the token list's bits
    if constexpr (kTokens) words = (Mods::token_list_length(p) + 31) / 32;
    // Each producer thread finds one key of a pair: row t % 64 of the pair's chunk t / 64, so that
    // a pair's list and page-table reads are one short chain a thread, not eight.
    const int my_chunk = tid >> 6, my_row = tid & 63;
    // The class of chunk `local` of the split. Every thread takes both chunks' classes: with the
    // chunk a runtime choice per thread, ptxas spilled the producer under masks that read tensors.
    auto chunk_class = [&](int local) {
      if constexpr (kTokens) return Mods::kHasMask ? static_cast<int>(PARTIAL) : static_cast<int>(FULL);
      const int chunk = c_begin + local;
      return detail::packed_chunk_class<Mods>(p, b, rows, max2(base + chunk * BN, lo), min2(base + chunk * BN + BN, hi));
    };
    // The key of row my_row of chunk `local` of class cls (-1: none; a bad page's too).
    auto find_key = [&](int local, int cls) {
      const int chunk = c_begin + local;
      int k = -1;
      if constexpr (kTokens) {
        const int rank = chunk * BN + my_row;
        if (rank < listed)
          k = Mods::token_list_entry(p, b, rows.h_first, rows.token_of(0),
                                     detail::mla_sm90_entry_of_rank(token_bits, token_ranks, words, rank));
      } else {
        const int kk = base + chunk * BN + my_row;
        if (cls != EMPTY && kk >= lo && kk < hi) k = kk;
      }
      if (k >= 0 && paged) {
        const int page = detail::page_of(a.cache, seq.pages, k);
        if (page < 0 || page >= a.cache.num_pages) {
          *bad_flag = 1;
          k = -1;
        }
      }
      return k;
    };
    // Buffer c's keys and class (from the threads that found them), for the consumers' mods and
    // every producer thread's load_half.
    auto publish = [&](int c, int key, int cls) {
      if (my_chunk == c) {
        keys_of(c)[my_row] = key;
        if (my_row == 0) *class_of(c) = cls;
      }
      sm90::named_barrier_sync(kProducerKeys, 128);
    };
    // One half of buffer c (column blocks [0, kHalfBlocks) or [kHalfBlocks, KB)), from its keys.
    auto load_half = [&](int c, int half) {
      // Made here, not kept: the producer's 24 registers hold nothing across the walk they need not.
      const unsigned long long key_policy = sm90::l2_policy_evict_last();
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int r = grp + 16 * j;
        const int k = keys_of(c)[r];
        long long offset = 0;
        if (k >= 0) offset = paged ? detail::page_of(a.cache, seq.pages, k) * a.k_b + (k % a.cache.page_size) * a.k_t
                                   : k * a.k_t;
        const unsigned short* src = gK + offset;
#pragma unroll
        for (int cb = 0; cb < KB; ++cb)
          if ((cb < kHalfBlocks) == (half == 0))
            sm90::cp_async_16_prefetch_256(swizzled(sChunk(c), cb, r), src + cb * 64 + i8 * 8, k >= 0, key_policy);
      }
      sm90::cp_async_mbarrier_arrive(full(c, half));
      sm90::mbarrier_arrive(full(c, half));
    };
    // Pair i: chunk 2i into buffer 0, 2i + 1 into buffer 1, each half as soon as its readers of the
    // previous pair have released it (in the order they do). A buffer's keys are rewritten once the
    // consumer whose mods read them has released the half loaded first.
#pragma unroll 1
    for (int i = 0; i < pairs; ++i) {
      const bool two = 2 * i + 1 < C;
      const unsigned released = (i - 1) & 1;
      const int cls0 = chunk_class(2 * i), cls1 = two ? chunk_class(2 * i + 1) : static_cast<int>(EMPTY);
      const int cls = my_chunk == 0 ? cls0 : cls1;
      const int key = my_chunk == 0 || two ? find_key(2 * i + my_chunk, cls) : -1;
      if (i > 0) sm90::mbarrier_wait(empty(0, 0), released);
      publish(0, key, cls);
      load_half(0, 0);
      if (two) {
        if (i > 0) sm90::mbarrier_wait(empty(1, 1), released);
        publish(1, key, cls);
        load_half(1, 1);
      }
      if (i > 0) sm90::mbarrier_wait(empty(0, 1), released);
      load_half(0, 1);
      if (two) {
        if (i > 0) sm90::mbarrier_wait(empty(1, 0), released);
        load_half(1, 0);
      }
    }
    cp_async_wait<0>();
    return;
  }

  // ------------------------------------------------------------------ consumers
  sm90::registers_claim<L::kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int warp = (tid >> 5) & 3;
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int t = lane & 3;
  int row[2], head[2], token[2];
  bool row_ok[2];
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    row[hf] = warp * 16 + g + 8 * hf;
    row_ok[hf] = row[hf] < nrows;
    head[hf] = rows.head_of(row_ok[hf] ? row[hf] : 0);
    token[hf] = rows.token_of(row_ok[hf] ? row[hf] : 0);
  }
  const typename detail::CtaOf<Mods>::type ctx0 = detail::CtaOf<Mods>::make(p, b, head[0]);
  const typename detail::CtaOf<Mods>::type ctx1 = detail::CtaOf<Mods>::make(p, b, head[1]);

  float o[kHalfV / 8][4];
#pragma unroll
  for (int nd = 0; nd < kHalfV / 8; ++nd)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[nd][e] = 0.f;
  float m_run[2] = {neg_inf(), neg_inf()};
  float l_run[2] = {0.f, 0.f};  // this thread's columns of the row
  float s[1][NN][4];
  unsigned pa[KN][1][4];

  // S = Q K^T of the chunk in buffer c (issued, not committed). S is zeroed although the first
  // product overwrites it: it is then no value carried from the last chunk (the asm reads its
  // accumulators), which made ptxas copy it and serialize the products.
  auto qk = [&](int c) {
#pragma unroll
    for (int j = 0; j < NN; ++j) s[0][j][0] = s[0][j][1] = s[0][j][2] = s[0][j][3] = 0.f;
    sm90::wgmma_fence();
#pragma unroll
    for (int cb = 0; cb < KB; ++cb) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const unsigned within = q * 32u;
        const unsigned long long ad = sm90::smem_descriptor(sQ + cb * kBlk + within, 16, 1024);
        const unsigned long long bd = sm90::smem_descriptor(sChunk(c) + cb * kBlk + within, 16, 1024);
        sm90::Wgmma<BN>::template ss<kBf16>(s[0], ad, bd, cb == 0 && q == 0 ? 0 : 1);
      }
    }
  };
  // Waits for half `half` of buffer c (pair phase ph), for Q K^T to read it.
  auto await = [&](int c, int half, unsigned ph) {
    sm90::mbarrier_wait(full(c, half), ph);
    sm90::fence_async_shared();  // the producer's cp.async rows, to the wgmma reading them
  };
  // The logits of the chunk in buffer c in place (log2 domain), and their row maxima.
  auto logits = [&](int c, float (&mx)[2]) {
    const int* keys = keys_of(c);
    const int cls = *class_of(c);
    mx[0] = mx[1] = neg_inf();
#pragma unroll
    for (int j = 0; j < NN; ++j) {
      const int2 kk = *reinterpret_cast<const int2*>(keys + 8 * j + 2 * t);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int key = e == 0 ? kk.x : kk.y;
#pragma unroll
        for (int hf = 0; hf < 2; ++hf) {
          float& x = s[0][j][2 * hf + e];
          bool keep = row_ok[hf] && key >= 0;
          if constexpr (Mods::kHasMask)
            if (cls == PARTIAL) keep = keep && Mods::mask(hf == 0 ? ctx0 : ctx1, b, head[hf], token[hf], key);
          if constexpr (Mods::kHasScoreMod) {
            x = keep ? Mods::score(hf == 0 ? ctx0 : ctx1, x * a.scale, b, head[hf], token[hf], key) * kLog2e : neg_inf();
          } else {
            x = keep ? x * a.scale_log2 : neg_inf();
          }
          mx[hf] = fmax2(mx[hf], x);
        }
      }
    }
    mx[0] = quad_max(mx[0]);
    mx[1] = quad_max(mx[1]);
  };
  // The logits to probabilities at max m (in place); adds them to l_run.
  auto exponentiate = [&](const float (&m)[2]) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const float mb = m[hf] == neg_inf() ? 0.f : m[hf];
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < NN; ++j)
#pragma unroll
        for (int e = 2 * hf; e < 2 * hf + 2; ++e) {
          s[0][j][e] = fast_exp2(s[0][j][e] - mb);
          sum += s[0][j][e];
        }
      l_run[hf] += sum;
    }
  };
  auto rescale = [&](const float (&f)[2]) {
#pragma unroll
    for (int nd = 0; nd < kHalfV / 8; ++nd) {
      o[nd][0] *= f[0];
      o[nd][1] *= f[0];
      o[nd][2] *= f[1];
      o[nd][3] *= f[1];
    }
    l_run[0] *= f[0];
    l_run[1] *= f[1];
  };
  // The probabilities times f, as 16-bit A operand (64 rows x 64 keys, swizzled) at sp.
  auto store_p = [&](unsigned sp, const float (&f)[2]) {
#pragma unroll
    for (int j = 0; j < NN; ++j)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const unsigned v = pack2<kBf16>(s[0][j][2 * hf] * f[hf], s[0][j][2 * hf + 1] * f[hf]);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(sp + row[hf] * kRowBytes + ((j ^ g) << 4) + 4 * t), "r"(v)
                     : "memory");
      }
    sm90::fence_async_shared();
  };
  // O += P V over this consumer's columns of buffer c: P from registers, or from shared memory at sp.
  const unsigned v_columns = consumer * kHalfBlocks * kBlk;
  auto pv_registers = [&](int c) {
#pragma unroll
    for (int kn = 0; kn < KN; ++kn) {
      const unsigned long long bd = sm90::smem_descriptor(sChunk(c) + v_columns + kn * 16 * kRowBytes, kBlk, 1024);
      sm90::Wgmma<kHalfV>::template rs<kBf16>(o, pa[kn][0], bd, 1);
    }
  };
  auto pv_shared = [&](int c, unsigned sp) {
#pragma unroll
    for (int kn = 0; kn < KN; ++kn) {
      const unsigned long long ad = sm90::smem_descriptor(sp + kn * 32, 16, 1024);
      const unsigned long long bd = sm90::smem_descriptor(sChunk(c) + v_columns + kn * 16 * kRowBytes, kBlk, 1024);
      sm90::Wgmma<kHalfV>::template ss_kn<kBf16>(o, ad, bd, 1);
    }
  };

  sm90::mbarrier_wait(smem0 + kL.q_full(), 0);
  sm90::fence_async_shared();
#pragma unroll 1
  for (int i = 0; i < pairs; ++i) {
    const bool two = 2 * i + 1 < C;
    // Consumer c's own chunk of the pair, 2i + c in buffer c (consumer 1 has none in a last pair
    // of one chunk): S, its logits and their max.
    const bool mine = consumer == 0 || two;
    float mx[2] = {neg_inf(), neg_inf()};
    if (mine) {
      await(consumer, 0, i & 1);
      await(consumer, 1, i & 1);
      qk(consumer);
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
      logits(consumer, mx);
    }
    // The pair's running max so far: consumer 0's own; consumer 1 raises consumer 0's by its own
    // (consumer 1's last max is consumer 0's before this pair, so it is in there).
    if (consumer == 1) {
      sm90::named_barrier_sync(kMax0, 256);
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) mx[hf] = fmax2(mx[hf], row_max(0)[row[hf]]);
    }
    float f[2];
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const float m = fmax2(m_run[hf], mx[hf]);
      f[hf] = detail::mla_sm90_rebase(m_run[hf], m);
      m_run[hf] = m;
    }
    rescale(f);
    // P of its own chunk at that max, published with the max; P V of it from registers.
    if (mine) {
      exponentiate(m_run);
      if (t == 0) {
        row_max(consumer)[row[0]] = m_run[0];
        row_max(consumer)[row[1]] = m_run[1];
      }
      sm90::named_barrier_arrive(consumer == 0 ? kMax0 : kMax1, 256);
      detail::pack_probabilities<kBf16>(s, pa);
      sm90::wgmma_fence();
      pv_registers(consumer);
      sm90::wgmma_commit();
    }
    if (consumer == 0) {
      sm90::wgmma_wait<0>();
      if (lane == 0) sm90::mbarrier_arrive(empty(0, 0));
      // The pair's max (consumer 1's), then P of chunk 2i at it for consumer 1, and P V of 2i + 1.
      float up[2] = {1.f, 1.f};
      if (two) {
        sm90::named_barrier_sync(kMax1, 256);
#pragma unroll
        for (int hf = 0; hf < 2; ++hf) {
          const float m = row_max(1)[row[hf]];
          up[hf] = detail::mla_sm90_rebase(m_run[hf], m);
          m_run[hf] = m;
        }
        rescale(up);
      }
      store_p(sP(0), up);
      sm90::named_barrier_arrive(kP0, 256);
      if (two) {
        sm90::named_barrier_sync(kP1, 256);
        sm90::wgmma_fence();
        pv_shared(1, sP(1));
        sm90::wgmma_commit();
        sm90::wgmma_wait<0>();
        if (lane == 0) sm90::mbarrier_arrive(empty(1, 0));
      }
    } else {
      // P of chunk 2i + 1 for consumer 0 (at the pair's max already), then P V of chunk 2i.
      if (two) {
        const float same[2] = {1.f, 1.f};
        store_p(sP(1), same);
        sm90::named_barrier_arrive(kP1, 256);
      }
      sm90::named_barrier_sync(kP0, 256);
      sm90::wgmma_fence();
      pv_shared(0, sP(0));
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
      if (lane == 0) {
        if (two) sm90::mbarrier_arrive(empty(1, 1));
        sm90::mbarrier_arrive(empty(0, 1));
      }
    }
  }

  // ---- the rows' sums from both consumers (through P 1's buffer, free once both have left the
  // walk), then sink, LSE and the output columns of this consumer.
  sm90::named_barrier_sync(kEnd, 256);
  float* const sums = reinterpret_cast<float*>(base_ptr + kL.p(1));
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const float l = quad_sum(l_run[hf]);
    if (t == 0) sums[consumer * R + row[hf]] = l;
  }
  sm90::named_barrier_sync(kEnd, 256);
  const bool any_bad = bad_before || *bad_flag != 0;
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    if (!row_ok[hf]) continue;
    const float l = sums[row[hf]] + sums[R + row[hf]];
    float lse;
    const float inv = detail::decode_row_scale<Mods>(p, b, head[hf], m_run[hf], l, a.splits == 1, any_bad, lse);
    const int h = head[hf], q = token[hf];
    if (consumer == 0 && t == 0) {
      if (a.splits == 1) {
        if (a.lse != nullptr) a.lse[(static_cast<i64>(b) * a.Hq + h) * a.Tq + q] = lse;
      } else {
        a.part_lse[((static_cast<i64>(split) * a.B + b) * a.Hq + h) * a.Tq + q] = lse;
      }
    }
    const int c0 = consumer * kHalfV + 2 * t;
    if (a.splits == 1) {
      unsigned short* gO = static_cast<unsigned short*>(a.o) + b * a.o_b + h * a.o_h + q * a.o_t + c0;
#pragma unroll
      for (int nd = 0; nd < kHalfV / 8; ++nd)
        *reinterpret_cast<unsigned*>(gO + nd * 8) = pack2<kBf16>(o[nd][2 * hf] * inv, o[nd][2 * hf + 1] * inv);
    } else {
      const i64 part_row = ((static_cast<i64>(split) * a.B + b) * a.Hq + h) * a.Tq + q;
      float* dst = a.part_o + part_row * L::kHeadDimV + c0;
#pragma unroll
      for (int nd = 0; nd < kHalfV / 8; ++nd)
        *reinterpret_cast<float2*>(dst + nd * 8) = make_float2(o[nd][2 * hf] * inv, o[nd][2 * hf + 1] * inv);
    }
  }
}

}  // namespace flexjit

// flexjit: the kernel argument structs, one definition for the kernels and for the host code that
// fills them (api/common_args.cpp and each pass's launch plan). Plain data, passed by value as
// __grid_constant__ kernel parameters; tests/api checks that NVRTC and the host compiler lay them
// out alike.
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

namespace flexjit {

// log2(e): the kernels keep logits in the log2 domain (exp2 is one instruction), and the host
// folds it into CommonArgs::scale_log2.
constexpr float kLog2e = 1.4426950408889634f;

// What every attention kernel takes (the first part of each family's argument block, filled by
// one host function: api/common_args.cpp). Layouts: q [B, Hq, Tq, D], k/v [B, Hkv, Tkv, D],
// o [B, Hq, Tq, D], all with element strides and a contiguous last dimension; lse [B, Hq, Tq]
// float32 contiguous, or nullptr (the forward's output, the backward's input).
// Requirements the launcher checks (the kernels move 16-byte vectors): q, k, v, o 16-byte
// aligned; every stride a multiple of 8 elements; Hq % Hkv == 0; Tq, Tkv >= 1; scale > 0 (the
// max is taken on the unscaled dot product when there is no score mod, which is only
// order-preserving for a positive scale).
struct CommonArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  int B, Hq, Hkv, Tq, Tkv;
  long long q_b, q_h, q_t;
  long long k_b, k_h, k_t;
  long long v_b, v_h, v_t;
  long long o_b, o_h, o_t;
  float scale;       // natural scale applied to <q, k> (usually 1/sqrt(D))
  float scale_log2;  // scale * kLog2e
};

// A built tile map (common/tile_map.cuh) as a kernel follows it: the row of tile t of query head
// h of batch b is b * b_stride + h * h_stride + t (a stride is 0 when the map is shared along
// that axis); counts[row] entries of that row are valid, each row row_entries long. The forward
// walks a row per query tile (entries: kv tiles), the backward a row per kv tile (entries: query
// tiles). counts is null when the call has no map.
struct TileMapRef {
  const int* counts;
  const int* entries;
  int b_stride, h_stride;
  int row_entries;
  int unused;
};

// The forward pass. With a tile map (Mods::kHasTileMap and tile_map.counts not null) the kernel
// follows it instead of kv_range + classify.
struct AttnArgs : CommonArgs {
  TileMapRef tile_map;
  // Persistent kernels (sm90 forward with Cfg::kPersistent): the grid takes query tiles from this
  // counter, zeroed before the launch; each CTA's first tile is its blockIdx.x. Null otherwise.
  int* tile_counter;
  // fp8 kernels (q, k, v in e4m3): ForwardOptions' descale factors, the one of (b, kv head hk) at
  // b * descale_b + hk * descale_h (both 0: one factor per tensor); null: 1. Other kernels: null.
  const float* q_descale;
  const float* k_descale;
  const float* v_descale;
  int descale_b, descale_h;
  // fp8 kernels: v transposed by the pre-pass (templates/sm90/fp8.cuh), [B, Hkv, Dv, vt_keys] bytes
  // in the call's workspace, vt_keys = Tkv rounded up to 16. Null otherwise.
  void* vt;
  int vt_keys;
  int unused_fp8;
};

// A KV cache as the kernels read it (the decode kernel, and the prefill families' chunk kernels:
// ChunkArgs). CommonArgs::Tkv is the keys a sequence can hold (the dense cache's length, or
// max_pages * page_size); sequence b has kv_lens[b * lens_stride] keys. Dense k and v are
// [B, Hkv, Tkv, D] (k_b, k_h, k_t: batch, head and token strides); paged ones (page_table not
// null) are [num_pages, page_size, Hkv, D] (k_b, k_h, k_t: page, head and slot strides), key j of
// sequence b in page page_table[b * pt_b + (j / page_size) * pt_p]. The host never reads kv_lens
// or page_table: a length outside [0, Tkv] or a page outside [0, num_pages) that a sequence
// reaches makes its rows NaN (common/kv_cache.cuh), and no byte outside k and v is read.
struct KvCacheRef {
  const int* kv_lens;
  const int* page_table;
  long long lens_stride, pt_b, pt_p;
  int page_size, num_pages, max_pages;
  int unused;
};

// A chunk of new tokens (chunked prefill) against a KV cache on a prefill family
// (attention_chunk_sm80, attention_chunk_sm90): the forward's grid and tiles, each sequence's keys
// as `cache` says. No tile map: the kernels classify tiles themselves. The sm90 kernel's K and V
// tensor maps have boxes of kv_box_rows rows: the block_n of its tile when k and v are dense, and
// gcd(block_n, page_size) when paged (a box never crosses a page; api/tma_maps.cpp).
struct ChunkArgs : AttnArgs {
  KvCacheRef cache;
  int kv_box_rows;
  int unused;
};

// The backward pass (templates/sm80/attention_bwd.cuh): o and lse as the forward wrote them,
// dout like o, dq like q, dk and dv like k and v (16-bit, the same stride rules). The workspace
// (fp32, allocated per call) has rows padded to a whole number of query tiles,
// Tq_pad = ceil(Tq / block_m) * block_m:
//   dq_accum [B, Hq, Tq_pad, D]: dQ / scale, summed over kv tiles by atomics (zeroed by the pre-pass;
//   the sm90 backward orders each query tile's span in blocks, detail::DqBlockedLayout);
//   lse2 [B, Hq, Tq_pad]: lse in the log2 domain, +inf where lse is -inf (a row with nothing kept)
//   and in the padding, so that exp2(logit - lse2) is 0 there;
//   delta [B, Hq, Tq_pad]: D_i = <dO_i, O_i> (0 in the padding).
// The transposed tile map (build_q_tile_map), built per call for masks that read tensors and for
// block lists, is followed instead of q_range + classify.
struct BwdArgs : CommonArgs {
  const void* dout;
  void* dq;
  void* dk;
  void* dv;
  float* dq_accum;
  float* lse2;
  float* delta;
  // Deterministic dQ (BackwardOptions::deterministic, the kernels generated with kOrderedDq): per
  // (b, query head, query tile of BM rows), how many of the kv tiles that reach it have added their
  // dQ (common/bwd_tile.cuh, DqTurns). Null in the default kernels: the atomics land in any order.
  int* dq_turns;
  int Tq_pad;
  int kv_heads_per_group;  // the main kernel's grid order (common/bwd_tile.cuh, bwd_kv_tile)
  long long do_b, do_h, do_t;
  long long dq_b, dq_h, dq_t;
  long long dk_b, dk_h, dk_t;
  long long dv_b, dv_h, dv_t;
  TileMapRef tile_map;
  // Deterministic dQ: kv tile n adds into replica n % dq_replicas of dq_accum (each
  // dq_replica_floats long, with its own dq_turns counters), so that each query tile's chain of
  // ordered adds is dq_replicas times shorter; the post-pass sums the replicas in order. 1 in the
  // default kernels.
  int dq_replicas;
  long long dq_replica_floats;
};

// Decode against a KV cache (templates/decode/attention_decode.cuh), `cache` as above.
// A CTA covers rows_per_cta of the group * Tq (query head, new token) rows of one kv head (grid.y:
// kv head * row_groups + row group) and split grid.x of `splits` ranges of its keys. With more than
// one split, each writes its normalised partial O and its LSE to part_o [splits, B, Hq, Tq, D] and
// part_lse [splits, B, Hq, Tq] (fp32), and the combine kernel merges them into o and lse.
struct DecodeArgs : CommonArgs {
  float* part_o;
  float* part_lse;
  KvCacheRef cache;
  int group;         // Hq / Hkv
  int rows_per_cta;  // <= decode::kRows
  int row_groups;    // CTAs per kv head (slots of decode/attention_decode.cuh's decode_slot)
  int splits;        // of each sequence's keys (grid.x: splits * folds)
  int v_in_k;        // v is k's first head_dim_v columns (same storage): decode_mla reads it from K's rows
  int unused;
};

// A CUDA tensor map (CUtensorMap: 128 opaque bytes, 64-byte aligned) for the copy engine (TMA),
// encoded on the host with cuTensorMapEncodeTiled (api/tma_maps.cpp) and passed by value.
struct alignas(64) TmaDescriptor {
  unsigned long long opaque[16];
};

// The third kernel argument of families that load with TMA (templates/sm90/attention_fwd.cuh).
struct TmaMaps {
  TmaDescriptor q, k, v;
};

// The sm90 backward's maps, (D, T, H, B) with the 128-byte swizzle: q and dout with boxes of
// (64, block_m, 1, 1), k and v of (64, block_n, 1, 1).
struct BwdTmaMaps {
  TmaDescriptor q, dout, k, v;
};

// The tile-map builders' arguments (common/tile_map.cuh). The forward's map has a row of
// n_kv_tiles entries per query tile, the backward's a row of n_q_tiles entries per kv tile.
struct TileMapArgs {
  int* counts;
  int* entries;
  int Tq, Tkv;
  int n_q_tiles, n_kv_tiles;
  int Hm;  // heads in the map (1 when the mask ignores h), for the row index
};

// merge_attention's arguments (common/merge_attention.cuh). Element types of the outs (each part
// and the result may differ).
enum MergeElement : int { kMergeF32 = 0, kMergeBf16 = 1, kMergeFp16 = 2 };

// out [B, H, T, D] of one element type, strides in elements.
struct MergeOut {
  void* data;
  long long sb, sh, st, sd;
  int element;
};

// lse float32 [B, H, T], strides in elements.
struct MergeLse {
  float* data;
  long long sb, sh, st;
};

// Parts per launch; the host merges more in rounds, the result of one being a part of the next.
constexpr int kMergeMaxParts = 16;
constexpr int kMergeWarps = 4;  // rows per CTA

struct MergeArgs {
  MergeOut out;
  MergeLse lse;
  MergeOut part_out[kMergeMaxParts];
  MergeLse part_lse[kMergeMaxParts];
  int parts;
  int H, T, D;
  long long rows;  // B * H * T
};

}  // namespace flexjit

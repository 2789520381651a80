// flexjit: the decode family's tile table and shared-memory formula, one copy for the host
// (codegen/decode, api/decode_launch.cpp) and the kernel template (templates/decode/attention_decode.cuh).
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

namespace flexjit {
namespace decode {

// A decode CTA packs up to kRows (query head, new token) rows of one kv head, so that every K/V
// byte it reads serves all of them; its kWarps warps each stream their own chunks of keys
// (block_n keys, one per lane at most) through a ring of `stages` chunks.
constexpr int kRows = 16;   // one m16 tile of the mma
constexpr int kWarps = 4;

// The combine kernel merges the splits' partial rows, one warp per (b, h, token) row.
constexpr int kCombineRows = 4;
constexpr int kCombineThreads = kCombineRows * 32;

struct DecodeTile {
  int block_n, stages;
};

// Keys per chunk and ring depth per head dim. Memory-bound: the rings must keep enough bytes in
// flight per SM (about 40-80 KB at 4.8 TB/s and 1-2 us of latency under load).
//   D <= 128: 32 keys, 2 stages (34 KB per warp at D = 128: 140 KB per CTA, one CTA per SM).
//   D <= 256: 16 keys, 2 stages (the same bytes per chunk at twice the row width).
constexpr DecodeTile default_decode_tile(int head_dim) {
  return head_dim <= 128 ? DecodeTile{32, 2} : DecodeTile{16, 2};
}

// Shared memory rows are padded by 8 elements (16 bytes) so ldmatrix phases hit distinct banks.
constexpr int decode_smem_stride(int head_dim) { return head_dim + 8; }

// Q (kRows padded rows), then per warp a ring of `stages` slots of [K chunk | V chunk]; the warps'
// partial results (fp32 O, max and sum per row) reuse the ring at the end.
constexpr int decode_ring_bytes(int head_dim, int block_n, int stages) {
  return kWarps * stages * 2 * block_n * decode_smem_stride(head_dim) * 2;
}
constexpr int decode_merge_bytes(int head_dim) { return kWarps * kRows * (head_dim + 2) * 4; }
constexpr int decode_smem_bytes(int head_dim, int block_n, int stages) {
  return kRows * decode_smem_stride(head_dim) * 2 +
         (decode_ring_bytes(head_dim, block_n, stages) > decode_merge_bytes(head_dim)
              ? decode_ring_bytes(head_dim, block_n, stages)
              : decode_merge_bytes(head_dim));
}

// Token-level top-k (TokenIndices): a CTA serves one query token, whose list of at most
// max_token_list() entries it sorts (in the ring, free until the first chunk is issued) and keeps,
// sorted and without repeats, after the rest for the whole main loop. Functions, not constants:
// NVRTC writes every namespace-scope constant into the PTX, and programs without token lists keep
// theirs as it was.
constexpr int max_token_list() { return 4096; }
constexpr int decode_token_list_bytes() { return max_token_list() * 4; }
constexpr int decode_smem_bytes(int head_dim, int block_n, int stages, bool token_list) {
  return decode_smem_bytes(head_dim, block_n, stages) + (token_list ? decode_token_list_bytes() : 0);
}
// sm_80's shared memory per CTA (163 KB); every decode tile stays within it.
constexpr int max_smem_bytes() { return 163 * 1024; }

}  // namespace decode
}  // namespace flexjit

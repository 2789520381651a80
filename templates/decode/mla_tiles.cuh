// flexjit: the decode_mla family's tile and shared-memory formulas, one copy for the host
// (codegen/decode/mla_family.cpp, api/decode_launch.cpp) and the kernel template
// (templates/decode/attention_decode_mla.cuh).
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

namespace flexjit {
namespace decode_mla {

// Multi-head latent attention's absorbed decode (q and k of 576 columns, v the first 512 of k's
// rows, one kv head shared by 16-128 query heads) gives each key row hundreds of columns: a CTA
// packs up to kRows (query head, new token) rows, four m16 tiles, and its kWarps warps share every
// chunk of kBlockN keys (each key byte read once serves all the rows): the logits split over warps
// by key halves and head-dim slices, the output over warps by columns.
constexpr int kRows = 64;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kBlockN = 32;
constexpr int kMaxHeadDim = 576;
constexpr int kMaxHeadDimV = 512;

// Rows of Q, K and V in shared memory are padded by 16 bytes so ldmatrix phases hit distinct banks.
constexpr int row_bytes(int head_dim) { return (head_dim + 8) * 2; }
// The partial logits (fp32, kRows slots of a chunk) and the probabilities (16-bit), padded likewise.
constexpr int kLogitStride = kBlockN + 8;  // floats
constexpr int kProbStride = kBlockN + 8;   // elements

constexpr int q_bytes(int head_dim) { return kRows * row_bytes(head_dim); }
// A ring slot: the chunk's K rows, then its V rows when v has storage of its own (separate_v).
constexpr int slot_bytes(int head_dim, int head_dim_v, bool separate_v) {
  return kBlockN * (row_bytes(head_dim) + (separate_v ? row_bytes(head_dim_v) : 0));
}
constexpr int logits_bytes() { return kRows * kLogitStride * 4; }
constexpr int probs_bytes() { return kRows * kProbStride * 2; }
// Per row: the rescale factor of the chunk, then the output scale at the end.
constexpr int row_state_bytes() { return 2 * kRows * 4; }

// Q | ring of `stages` slots | logits | probabilities | row state | `list_bytes` (a program with
// token lists: the listed keys, decode::decode_token_list_bytes()).
constexpr int smem_bytes(int head_dim, int head_dim_v, int stages, bool separate_v, int list_bytes = 0) {
  return q_bytes(head_dim) + stages * slot_bytes(head_dim, head_dim_v, separate_v) + logits_bytes() +
         probs_bytes() + row_state_bytes() + list_bytes;
}

// Shared memory a CTA may take on the architecture sm_<arch> (opt-in maximum); 0 below sm_80.
constexpr int max_smem_bytes(int arch) {
  return arch >= 100 ? (arch >= 120 ? 99 * 1024 : 227 * 1024)
         : arch >= 90 ? 227 * 1024
         : arch == 80 || arch == 87 ? 163 * 1024
         : arch >= 80 ? 99 * 1024
                      : 0;
}

struct MlaTile {
  int stages;       // 0: does not fit at all
  bool separate_v;  // a V ring of its own; false: v must be k's first head_dim_v columns
};

// The deepest ring (3 chunks, else 2) that fits beside `list_bytes`, with a V ring of its own where
// that costs no stage: the absorbed form reads v from k's rows (576 / 512: three stages on sm_90,
// two on sm_80, and no room there for a token list), while v of its own storage (q and k of 192, v
// of 128) needs the V ring.
constexpr MlaTile choose_tile(int head_dim, int head_dim_v, int arch, int list_bytes = 0) {
  const int limit = max_smem_bytes(arch);
  for (int stages = 3; stages >= 2; --stages)
    for (int separate = 1; separate >= 0; --separate)
      if (smem_bytes(head_dim, head_dim_v, stages, separate == 1, list_bytes) <= limit)
        return MlaTile{stages, separate == 1};
  return MlaTile{0, false};
}

}  // namespace decode_mla
}  // namespace flexjit

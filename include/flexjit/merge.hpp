#pragma once
// Attention over a union of disjoint key sets, put together from the attention over each set:
// the kv shards of context parallelism, a prefix shared by many sequences and each one's own
// suffix, the splits of a long key range. Each part is what a forward call wrote (out and lse).
#include <span>

#include "flexjit/tensor_view.hpp"

namespace flexjit {

// One part: a forward call's out [B, H, T, D] (bf16, fp16 or f32) and lse float32 [B, H, T].
struct AttentionPart {
  TensorView out;
  TensorView lse;
};

struct MergeOptions {
  // CUDA tensors: the CUstream the merge is enqueued on (the call returns before it runs). Host
  // tensors: not used (the call returns with out and lse written).
  void* stream = nullptr;
};

// For every row, over the parts i:
//   lse = log sum_i exp(lse_i)        out = sum_i exp(lse_i - lse) out_i
// A part whose row kept no key (lse_i = -inf) adds nothing; a row that no part kept gets out = 0
// and lse = -inf, as a forward call gives it. out and every out_i have one shape [B, H, T, D],
// each in bf16, fp16 or f32 with any strides (the last dim contiguous); lse and every lse_i are
// float32 [B, H, T], contiguous. out and lse may be one part's own (the same views): the merge
// reads a row of every part before it writes that row.
//
// The backward needs no merge of its own: Kernel::backward of each part, given the merged out
// and lse in place of the part's own and the same dout, returns that part's keys' dk and dv and
// its share of dq (the parts' dq summed are the whole dq), exactly as one call over all the keys.
//
// Every tensor on the host, or every tensor on one CUDA device (out's), where one kernel launch per
// 16 parts merges them (compiled with NVRTC on the first CUDA merge of the process, through the
// kernel cache). An ArgumentError names each problem before anything runs.
void merge_attention(std::span<const AttentionPart> parts, const TensorView& out, const TensorView& lse,
                     const MergeOptions& options = {});

}  // namespace flexjit

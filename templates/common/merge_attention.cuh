// flexjit::merge_attention on CUDA tensors: the log-sum-exp merge of partial attentions (the kv
// shards of context parallelism, a shared prefix and each sequence's suffix). For every row,
//   lse = log sum_i exp(lse_i)        out = sum_i exp(lse_i - lse) out_i
// One warp per (b, h, t) row, each lane a column and every 32nd after it. A lane reads column d of
// every part before it writes column d of out, and every lane reads the parts' lse before lane 0
// writes the row's, so out and lse may be a part's own. Rows that no part kept (every lse_i -inf)
// get out 0 and lse -inf; a NaN lse_i carries NaN into its row, as on the host (api/merge.cpp).
#pragma once

#include "common/attention_common.cuh"  // MergeArgs: common/kernel_args.cuh

namespace flexjit {

__device__ __forceinline__ float merge_load(const MergeOut& t, long long at) {
  if (t.element == kMergeF32) return static_cast<const float*>(t.data)[at];
  const unsigned short x = static_cast<const unsigned short*>(t.data)[at];
  return t.element == kMergeBf16 ? to_float<true>(x) : to_float<false>(x);
}

__device__ __forceinline__ void merge_store(const MergeOut& t, long long at, float x) {
  if (t.element == kMergeF32)
    static_cast<float*>(t.data)[at] = x;
  else
    static_cast<unsigned short*>(t.data)[at] = t.element == kMergeBf16 ? from_float<true>(x) : from_float<false>(x);
}

template <class T>
__device__ __forceinline__ long long merge_row_offset(const T& t, long long b, int h, int s) {
  return b * t.sb + h * t.sh + s * t.st;
}

__device__ __forceinline__ void merge_attention_rows(const MergeArgs& a) {
  const long long row = static_cast<long long>(blockIdx.x) * kMergeWarps + (threadIdx.x >> 5);
  if (row >= a.rows) return;
  const int lane = threadIdx.x & 31;
  const int s = static_cast<int>(row % a.T);
  const int h = static_cast<int>((row / a.T) % a.H);
  const long long b = row / (static_cast<long long>(a.T) * a.H);

  float lse[kMergeMaxParts];
  float top = neg_inf();  // fmaxf passes over a NaN lse_i, whose weight then carries it on
  for (int i = 0; i < a.parts; ++i) {
    lse[i] = a.part_lse[i].data[merge_row_offset(a.part_lse[i], b, h, s)];
    top = fmaxf(top, lse[i]);
  }
  const long long at = merge_row_offset(a.out, b, h, s);
  float* const lse_at = a.lse.data + merge_row_offset(a.lse, b, h, s);
  if (top == neg_inf()) {
    for (int d = lane; d < a.D; d += 32) merge_store(a.out, at + d * a.out.sd, 0.f);
    __syncwarp();
    if (lane == 0) *lse_at = neg_inf();
    return;
  }
  float weight[kMergeMaxParts];
  float total = 0.f;
  for (int i = 0; i < a.parts; ++i) total += weight[i] = expf(lse[i] - top);
  const float inv = 1.f / total;
  for (int d = lane; d < a.D; d += 32) {
    float acc = 0.f;
    for (int i = 0; i < a.parts; ++i) {
      const MergeOut& part = a.part_out[i];
      if (weight[i] != 0.f) acc += weight[i] * merge_load(part, merge_row_offset(part, b, h, s) + d * part.sd);
    }
    merge_store(a.out, at + d * a.out.sd, acc * inv);
  }
  __syncwarp();
  if (lane == 0) *lse_at = top + logf(total);
}

}  // namespace flexjit

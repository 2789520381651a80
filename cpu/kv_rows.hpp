#pragma once
// Where the CPU attention finds the key and value rows of a sequence, and how many it has: dense
// [B, Hkv, Tkv, D] arrays, or vLLM's pages [num_pages, page_size, Hkv, D] through a page table
// (positions are the sequence's own either way: key j is the j-th token of sequence b).
#include <cstdint>

#include "cpu/attention.hpp"

namespace flexjit::cpu {

class KvRows {
 public:
  explicit KvRows(const CpuAttentionInputs& in) : in_(in) {}

  int length(int b) const { return in_.kv_lens ? in_.kv_lens[b] : in_.Tkv; }
  const float* key(int b, int kv_head, int j) const { return row(in_.k, in_.D, b, kv_head, j); }
  const float* value(int b, int kv_head, int j) const { return row(in_.v, in_.dv(), b, kv_head, j); }

 private:
  // Rows of `width` floats.
  const float* row(const float* base, int width, int b, int kv_head, int j) const {
    using i64 = std::int64_t;
    if (!in_.page_table) return base + ((static_cast<i64>(b) * in_.Hkv + kv_head) * in_.Tkv + j) * width;
    const i64 page = in_.page_table[static_cast<i64>(b) * in_.max_pages + j / in_.page_size];
    return base + ((page * in_.page_size + j % in_.page_size) * in_.Hkv + kv_head) * width;
  }

  const CpuAttentionInputs& in_;
};

}  // namespace flexjit::cpu

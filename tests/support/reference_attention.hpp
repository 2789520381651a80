// The tests' one oracle: FlexAttention forward (docs/design.md, "The contract with users") in float64, with
// mask_mod, score_mod and sink evaluated by the IR interpreter (the language's executable spec)
// on the bindings the code under test gets. Written from the contract, sharing no code with the
// CPU or GPU attention it checks.
//
//   s_ij = score_mod(fp32(scale * <q_i, k_j>), b, h, i, j)  if mask_mod(b, h, i, j) else -inf
//   out_i = sum_j exp(s_ij - m) v_j / l,  l = sum_j exp(s_ij - m) + exp(sink - m),  lse_i = m + log l
// (<q, k> and everything after score_mod in double; score_mod itself takes and returns fp32, as
// the kernels do). Block-sparse programs see only keys of the kv blocks listed for the row's query
// block, token-sparse ones only the keys listed for the row (tests/support/listed_keys.hpp). A row with no visible key and no sink: out = 0, lse = -inf. A row with a NaN score on a
// visible key, or a NaN sink: out and lse NaN, as PyTorch's softmax gives.
//
// A KV cache (flexjit::ForwardOptions::kv_lens, page_table): sequence b has kv_lens[b] keys,
// j = 0..kv_lens[b]-1 in the formulas; with a page table, key j of sequence b is row j % page_size
// of page page_table[b * max_pages + j / page_size] of k and v ([num_pages, page_size, Hkv, D]).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::test {

struct ReferenceInputs {
  const float* q = nullptr;  // [B, Hq, Tq, D] contiguous
  const float* k = nullptr;  // [B, Hkv, Tkv, D], or pages [num_pages, page_size, Hkv, D]
  const float* v = nullptr;  // the same with Dv columns
  int B = 1, Hq = 1, Hkv = 1, Tq = 1, Tkv = 1, D = 1;
  double scale = 1.0;
  const ir::Env* env = nullptr;  // scalars and host tensors (nullptr: none)
  const std::int32_t* kv_lens = nullptr;     // [B]; nullptr: Tkv keys each
  const std::int32_t* page_table = nullptr;  // [B, max_pages]; nullptr: k and v are [B, Hkv, Tkv, D]
  int page_size = 0, max_pages = 0;
  int Dv = 0;  // the head dim of v and out (MLA shapes); 0: D
  int dv() const { return Dv > 0 ? Dv : D; }
  // Global positions (ForwardOptions::q_offset, kv_offset): the mods see i + q_offset and
  // j + kv_offset; lists and kv_lens index this call's rows.
  std::int64_t q_offset = 0, kv_offset = 0;
};

struct ReferenceOutputs {
  std::vector<double> out;            // [B, Hq, Tq, Dv]
  std::vector<double> lse;            // [B, Hq, Tq]
  std::vector<std::int32_t> visible;  // [B, Hq, Tq]: keys the mask (and block list) keep in each row
};

// Spread over the machine's cores by (b, h, row block).
ReferenceOutputs reference_attention(const ir::Program& program, const ReferenceInputs& in);

// ||a - b|| / ||b|| over all elements (||a - b|| when b is 0).
double relative_l2(const std::vector<float>& a, const std::vector<double>& b);

}  // namespace flexjit::test

#pragma once
// FlexAttention forward on the host: the fast CPU path of `flexjit run --device cpu` and a
// reference for the GPU tests. Built with or without LLVM.
//
// For batch b, query head h, query row i and key row j (GQA: kv head = h / (Hq / Hkv)):
//   s_ij  = score_mod(scale * <q_i, k_j>, b, h, i, j)  if mask_mod(b, h, i, j) else -inf
//   out_i = sum_j softmax_j(s_ij) v_j,   lse_i = log(sum_j exp(s_ij))  (natural log)
// A sink (`sink(b, h)`) adds exp(sink) to each row's denominator and to lse, with no value
// vector. A row whose every score is -inf (and no sink) gives out = 0 and lse = -inf; with a
// finite sink it gives out = 0 and lse = sink.
//
// Numerics: <q_i, k_j> is an fp32 dot product (eight interleaved partial sums), scale * dot is
// rounded to fp32 and the mods see fp32 exactly as on the GPU. The softmax is then computed in
// float64 (max, exponentials, denominator, P.V sums, log) and rounded to fp32 once per output:
// a reference-quality result, not the GPU's rounding.
//
// Block-sparse programs (`BlockIndices[qb, kb]`): when env binds an int32 tensor of that name
// with shape [B, Hq, ceil(Tq / qb), K], a query row attends only to keys in the listed blocks
// (-1 = no block; repeats count once), and mask_mod still applies inside them. An entry outside
// [-1, ceil(Tkv / kb)) is an error. When the name is not bound, every block is selected (the
// element mask alone decides). Token-sparse programs (`TokenIndices`) likewise, with an int32
// tensor [B, H, Tq, K] of key positions per query row (H: Hq, Hkv or 1; cpu/key_select.hpp).
//
// Layout: q [B, Hq, Tq, D], k [B, Hkv, Tkv, D], v [B, Hkv, Tkv, Dv], out [B, Hq, Tq, Dv], lse [B, Hq, Tq]
// (optional: nullptr skips it), all contiguous float32 host arrays. Work is spread over
// std::thread::hardware_concurrency() threads by (b, h, block of query rows).
//
// Decode and ragged batches (flexjit::ForwardOptions::kv_lens, page_table): with kv_lens,
// sequence b has kv_lens[b] <= Tkv keys, and that length is its Tkv everywhere above (kv_idx,
// block lists); a length of 0 leaves its rows without keys. With a page table as well, k and v
// are pages [num_pages, page_size, Hkv, D], key j of sequence b is row j % page_size of page
// page_table[b * max_pages + j / page_size], and Tkv must be max_pages * page_size.
#include <cstdint>
#include <limits>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu {

enum class CpuBackend {
  Auto,        // Llvm when llvm_backend_available(), else Interpreter
  Llvm,        // the mods JIT-compiled (cached per program); throws when LLVM is not built in
  Interpreter  // the mods through ir::evaluate (slow; the executable spec)
};
const char* backend_name(CpuBackend b);  // "auto", "llvm", "interpreter"

struct CpuAttentionInputs {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int B = 1, Hq = 1, Hkv = 1, Tq = 1, Tkv = 1, D = 1;
  float scale = std::numeric_limits<float>::quiet_NaN();  // NaN: 1 / sqrt(D)
  const ir::Env* bindings = nullptr;                       // scalars and tensors; nullptr: none
  const std::int32_t* kv_lens = nullptr;     // [B]; nullptr: Tkv keys each
  const std::int32_t* page_table = nullptr;  // [B, max_pages], needs kv_lens; nullptr: dense k and v
  int page_size = 0, max_pages = 0, num_pages = 0;  // of a page table
  int Dv = 0;  // the head dim of v and out (MLA shapes); 0: D
  int dv() const { return Dv > 0 ? Dv : D; }
  // Global positions: the mods see q_idx = i + q_offset, kv_idx = j + kv_offset (key lists and
  // kv_lens stay local to this call).
  std::int64_t q_offset = 0, kv_offset = 0;
};

// Throws std::invalid_argument for bad sizes, null arrays, or lengths and page numbers out of
// range, and std::runtime_error for a binding the program cannot use (unbound, wrong dtype or
// rank), a capture load out of range, a bad block list, or CpuBackend::Llvm without LLVM.
void cpu_attention_forward(const ir::Program& p, const CpuAttentionInputs& in, float* out, float* lse,
                           CpuBackend backend = CpuBackend::Auto);

// The backend Auto resolves to in this build.
CpuBackend resolve_backend(CpuBackend b);

}  // namespace flexjit::cpu

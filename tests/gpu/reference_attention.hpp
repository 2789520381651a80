// The GPU tests' oracle: FlexAttention forward (DESIGN.md) in float64, with mask_mod, score_mod
// and sink evaluated by the IR interpreter (the language's executable spec) on the same bindings
// the kernel gets. Inputs are the exact float values of the bf16 / fp16 elements the GPU reads.
//
//   s_ij = score_mod(fp32(scale * <q_i, k_j>), b, h, i, j)  if mask_mod(b, h, i, j) else -inf
//   out_i = sum_j exp(s_ij - m) v_j / l,  l = sum_j exp(s_ij - m) + exp(sink - m),  lse_i = m + log l
// (<q, k> and everything after score_mod in double; score_mod itself takes and returns fp32, as
// in the kernel). A row with no visible key and no sink: out = 0, lse = -inf.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::gpu_test {

struct ReferenceInputs {
  const float* q = nullptr;  // [B, Hq, Tq, D] contiguous
  const float* k = nullptr;  // [B, Hkv, Tkv, D]
  const float* v = nullptr;  // [B, Hkv, Tkv, D]
  int B = 1, Hq = 1, Hkv = 1, Tq = 1, Tkv = 1, D = 1;
  double scale = 1.0;
  const ir::Env* env = nullptr;  // scalars and host tensors
};

struct ReferenceOutputs {
  std::vector<double> out;             // [B, Hq, Tq, D]
  std::vector<double> lse;             // [B, Hq, Tq]
  std::vector<std::int32_t> visible;   // [B, Hq, Tq]: keys the mask keeps in each row
};

// Spread over the machine's cores by (b, h, row block).
ReferenceOutputs reference_attention(const ir::Program& program, const ReferenceInputs& in);

}  // namespace flexjit::gpu_test

// The tests' float64 oracle for the backward pass (FlexAttention's semantics), on the
// same inputs as reference_attention. Written from the formulas, sharing no code with a kernel:
//
//   s_ij = score_mod(fp32(scale * <q_i, k_j>), b, h, i, j) where the mask keeps (i, j)
//   P_ij = exp(s_ij - lse_i)  (lse_i includes the sink),  O_i = sum_j P_ij v_j
//   dV_j += P_ij dO_i;  dP_ij = <dO_i, v_j>;  D_i = <dO_i, O_i>;  dS_ij = P_ij (dP_ij - D_i)
//   dscore_ij = dS_ij * d score_mod / d score (i, j)
//   dQ_i += scale * dscore_ij k_j;  dK_j += scale * dscore_ij q_i
//   d sink_bh = -sum_i exp(sink_bh - lse_i) D_i
//   d capture[idx] += dS_ij * d score_mod / d capture at each load of score_mod that reads idx,
//                     and d sink_bh * d sink / d capture at each load of sink
// The derivatives of the mods come from ir::differentiate, evaluated by the interpreter in fp32
// at the fp32 score the forward passes to score_mod; everything else is double. GQA: dK and dV of
// a kv head sum over the query heads that share it. A row whose keys are all masked contributes
// nothing (its P is empty, and with a sink D_i = 0). Block- and token-sparse programs see only the
// listed keys, as in the forward. KV caches (kv_lens, page_table) have no backward: std::invalid_argument.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/support/reference_attention.hpp"

namespace flexjit::test {

struct ReferenceGradients {
  std::vector<double> dq;     // [B, Hq, Tq, D]
  std::vector<double> dk;     // [B, Hkv, Tkv, D]
  std::vector<double> dv;     // [B, Hkv, Tkv, Dv]
  std::vector<double> dsink;  // [B, Hq] when the program has a sink, else empty
  // Each float captured tensor that score_mod or sink reads with a derivative: row-major over
  // its bound shape (whatever the binding's strides).
  std::map<std::string, std::vector<double>> captures;
};

// dout: [B, Hq, Tq, Dv] contiguous (Dv: ReferenceInputs::dv()).
ReferenceGradients reference_backward(const ir::Program& program, const ReferenceInputs& in, const float* dout);

}  // namespace flexjit::test

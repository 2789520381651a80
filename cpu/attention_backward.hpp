#pragma once
// FlexAttention backward on the host: the gradients of sum(out * dout) with respect to
// q, k, v, the sink and the captured float tensors that score_mod and sink read, given a forward's
// inputs and results. Built with or without LLVM.
//
// For batch b, query head h, query row i and key row j (GQA: kv head = h / (Hq / Hkv)), over
// the pairs the forward keeps (mask_mod, block lists) with a finite score:
//   x_ij = fp32(scale * <q_i, k_j>),  s_ij = score_mod(x_ij, b, h, i, j),  P_ij = exp(s_ij - lse_i)
//   D_i  = <dO_i, O_i>,  dP_ij = <dO_i, v_j>,  dS_ij = P_ij (dP_ij - D_i)
//   dscore_ij = dS_ij * d score_mod / d score (x_ij)
//   dQ_i = scale * sum_j dscore_ij k_j,  dK_j = scale * sum_(h, i) dscore_ij q_i,  dV_j = sum_(h, i) P_ij dO_i
//   d sink_bh = -sum_i exp(sink_bh - lse_i) D_i
//   d capture[idx] += dS_ij * d score_mod / d capture at each load of score_mod that reads idx,
//                     and d sink_bh * d sink / d capture at each load of sink
// dK and dV of a kv head sum over the query heads that share it. A row with lse = -inf (every key
// masked, no sink) contributes nothing, and so does a pair whose P is 0.
//
// Numerics: P comes from the forward's lse (FlexAttention's recomputation); the dot products,
// D_i, dP - D (the cancellation that matters) and every sum are float64, the score is rounded to
// fp32 before the mods see it as in the forward, and each output is rounded to fp32 once. The
// mask and score mods and their derivatives (cpu/mod_gradient.hpp) run on the chosen back end
// (as in cpu/attention.hpp): with LLVM both are native code, bit for bit what the interpreter gives.
//
// Work: a pass over (b, h, 16 query rows) writes dQ and scatters score_mod's capture gradients
// into one accumulator per thread; a pass over (b, kv head, 16 key rows) recomputes the pairs
// from the keys' side and writes dK and dV, so neither pass writes what another thread writes.
// The sink's gradients are summed per (b, h) at the end. Memory: besides the outputs, one float64
// copy of each requested capture per thread (cpu/capture_gradients.hpp).
//
// KV caches (kv_lens, page_table) have no backward yet: std::invalid_argument.
#include <map>
#include <string>

#include "cpu/attention.hpp"

namespace flexjit::cpu {

// What the forward gave and the loss's gradient, contiguous float32 host arrays.
struct CpuForwardResults {
  const float* out = nullptr;   // [B, Hq, Tq, Dv]
  const float* lse = nullptr;   // [B, Hq, Tq], natural log, as cpu_attention_forward writes it
  const float* dout = nullptr;  // [B, Hq, Tq, Dv]: d loss / d out
};

// Where the gradients go, contiguous float32 host arrays, overwritten.
struct CpuGradients {
  float* dq = nullptr;  // [B, Hq, Tq, D]
  float* dk = nullptr;  // [B, Hkv, Tkv, D]
  float* dv = nullptr;  // [B, Hkv, Tkv, Dv]
  float* dsink = nullptr;  // [B, Hq]; nullptr: not wanted (needs a program with a sink)
  // Captured float tensors read by score_mod or sink (ir/gradient_captures.hpp): row-major over
  // the shape bound in CpuAttentionInputs::bindings. Tensors not listed get no gradient.
  std::map<std::string, float*> captures;
};

// Throws std::invalid_argument for bad sizes, null arrays, a KV cache, a dsink without a sink or
// a capture that has no gradient; std::runtime_error for what the forward would throw (bindings,
// loads out of range, block lists); flexjit::UnsupportedError when a mod cannot be differentiated.
void cpu_attention_backward(const ir::Program& p, const CpuAttentionInputs& in, const CpuForwardResults& fwd,
                            const CpuGradients& grads, CpuBackend backend = CpuBackend::Auto);

}  // namespace flexjit::cpu

// One GPU backward run (Kernel::backward on a CUDA kernel) checked against the float64 oracle
// (tests/support/reference_backward.hpp). An AttentionRun (attention_case.hpp) supplies the case:
// its inputs in the case's memory layout, its random bindings, and the forward's out and lse,
// written by the GPU forward and checked against the forward reference on the way. On top of that:
// a random dout in the same layout, dq, dk, dv (in q's and k's layout) and the gradient of every
// captured float tensor score_mod or sink reads (ir/gradient_captures.hpp) poisoned with NaN bytes,
// the backward, and the checks: relative L2 error of each gradient, no NaN (nothing left
// unwritten), exact zeros for query rows that see no key and keys no query row sees, and nothing
// written in the gaps of the padded layout.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/gpu/attention_case.hpp"

namespace flexjit::gpu_test {

// Relative L2 error of dq, dk and dv against the oracle: computed from 16-bit q, k, v, dout and the
// forward's 16-bit out, with fp32 accumulation, P and dS rounded to 16 bits for the tensor-core
// products, and one rounding of the result to 16 bits.
constexpr double kGradRelL2Bf16 = 2e-2;
constexpr double kGradRelL2Fp16 = 1e-2;
// Relative L2 error of a captured tensor's gradient (f32, summed over the rows and keys that read
// each element) against the oracle.
constexpr double kCaptureGradRelL2Bf16 = 2e-2;
constexpr double kCaptureGradRelL2Fp16 = 1e-2;

inline double grad_tolerance(DType d) { return d == DType::bf16 ? kGradRelL2Bf16 : kGradRelL2Fp16; }
inline double capture_grad_tolerance(DType d) {
  return d == DType::bf16 ? kCaptureGradRelL2Bf16 : kCaptureGradRelL2Fp16;
}

struct BackwardFigures {
  double dq = 0, dk = 0, dv = 0;           // relative L2 errors
  std::map<std::string, double> captures;  // relative L2 error of each gradient asked for
  // Query rows that see no key and keys that no query row sees (by the element mask): their dq,
  // resp. dk and dv, must be exactly 0. -1: not counted (the shape is too large to brute-force).
  std::int64_t empty_rows = -1, unseen_keys = -1;
};

class BackwardRun {
 public:
  // Compiles (through the shared engine's cache) and draws inputs, bindings and dout from `seed`.
  BackwardRun(const Case& c, std::uint64_t seed);
  ~BackwardRun();

  AttentionRun& forward() { return forward_; }
  // Whether the backward is asked for the captured tensors' gradients (default: all of
  // ir::gradient_captures; off: BackwardOptions::grads empty, the kernel without the scatter).
  void request_capture_gradients(bool on) { request_captures_ = on; }
  // BackwardOptions::deterministic: the backward runs twice (poisoned again in between), and dq,
  // dk and dv of the two runs must be the same bit for bit.
  void deterministic(bool on) { deterministic_ = on; }

  // Forward (checked), poison, backward, download, compare; failures are gtest failures naming
  // the case. Prints the figures.
  BackwardFigures run_and_check();

 private:
  struct DeviceSide;
  AttentionRun forward_;
  std::vector<float> dout_;  // the exact values the GPU reads, [B, Hq, Tq, Dv] contiguous
  std::unique_ptr<DeviceSide> device_;
  bool request_captures_ = true;
  bool deterministic_ = false;
};

}  // namespace flexjit::gpu_test

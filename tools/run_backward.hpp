// `flexjit run ... --dout do.npy --dq dq.npy --dk dk.npy --dv dv.npy [--grad NAME=FILE.npy]...`:
// after the forward, the backward of sum(out * dout) through the public API (Kernel::backward),
// on the device the forward ran on, writing the gradients as float32 .npy files (on cuda: the
// kernel dtype's values, converted exactly, as --out). What both devices share is said once:
// reading and checking --dout and the --grad list (before the forward runs), and writing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "tools/distinct_paths.hpp"
#include "tools/run_cuda.hpp"
#include "tools/run_inputs.hpp"

namespace flexjit::tools {

struct BackwardFiles {
  std::string dout, dq, dk, dv;    // "" when not given
  std::vector<std::string> grads;  // NAME=FILE.npy, as given
  bool requested() const { return !dout.empty(); }
  // --grad NAME=FILE.npy split, in the order given. Throws std::runtime_error for a malformed one
  // or a name given twice.
  std::vector<NamedPath> grad_outputs() const;
};

// What a backward takes besides the forward's tensors: dout (a float .npy of q's shape, as
// float32) and, per --grad, the captured tensor and the shape of its gradient (the bound
// tensor's; {0} for a name not bound as a tensor, so that the library names what is wrong).
struct BackwardInputs {
  struct Grad {
    std::string name, path;
    std::vector<std::int64_t> shape;
    std::size_t numel() const;
  };
  std::vector<float> dout;  // [B, Hq, Tq, D]
  std::vector<Grad> grads;  // in the order given
};

// Throws std::runtime_error naming --dout or --grad. Call it before the forward runs.
BackwardInputs read_backward_inputs(const AttentionData& data, const HostBindings& bindings, const BackwardFiles& files);

// The gradients, as float32 host arrays: dq [B, Hq, Tq, D], dk and dv of k's shape, and one per
// BackwardInputs::grads (same order, that entry's shape).
struct Gradients {
  std::vector<float> dq, dk, dv;
  std::vector<std::vector<float>> grads;
};

// The backward on a cpu kernel of `program` (float32), on the forward's inputs and its out and
// lse ([B, Hq, Tq, D] and [B, Hq, Tq]).
Gradients run_backward_on_cpu(const Program& program, const AttentionData& data, const HostBindings& bindings,
                              std::optional<float> scale, const std::vector<float>& out, const std::vector<float>& lse,
                              const BackwardInputs& inputs);

// The backward on the CUDA kernel of `forward`, on the forward's device tensors (q, k, v, out,
// lse) and bindings; dout is rounded to the kernel's dtype, each gradient of a captured tensor is
// a float32 device buffer. Waits for the device, then downloads.
Gradients run_backward_on_cuda(const CudaRun& forward, const AttentionData& data, std::optional<float> scale,
                               const BackwardInputs& inputs);

// --dq, --dk, --dv and each --grad file, float32.
void write_gradients(const BackwardFiles& files, const AttentionData& data, const BackwardInputs& inputs,
                     const Gradients& gradients);

}  // namespace flexjit::tools

// `flexjit run ... --dout do.npy --dq dq.npy --dk dk.npy --dv dv.npy [--grad NAME=FILE.npy]...`:
// after the forward, the backward of sum(out * dout) through the public API (Kernel::backward),
// writing the gradients as float32 .npy files. cpu only for now: on cuda the library's
// UnsupportedError is reported before anything runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "tools/distinct_paths.hpp"
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

// The backward on a cpu kernel of `program`, on the forward's inputs and its out and lse
// (float32, [B, Hq, Tq, D] and [B, Hq, Tq]). dout: a float .npy of q's shape. Each --grad names a
// captured tensor (the library says which have gradients) and gets an f32 array of its shape.
void run_backward_on_cpu(const Program& program, const AttentionData& data, const HostBindings& bindings,
                         std::optional<float> scale, const std::vector<float>& out, const std::vector<float>& lse,
                         const BackwardFiles& files);

// Throws the library's UnsupportedError for a CUDA kernel's backward (with a hint to use
// --device cpu), so that a run asking for gradients on cuda stops before anything runs.
void refuse_backward_on_cuda(const Program& program, const AttentionData& data, DType dtype, Math math);

}  // namespace flexjit::tools

// Host-side checks of what Kernel::backward takes beyond a forward call's tensors (those go through
// api/forward_checks.hpp): dout and the gradient outputs dq, dk, dv against q and k, and the
// captured tensors' gradients (BackwardOptions::grads) against the program and the bindings.
// Host placement for cpu kernels, the device rules for CUDA ones.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/argument_problems.hpp"
#include "api/forward_checks.hpp"
#include "flexjit/tensor_view.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::api {

struct BackwardTensors {
  const TensorView &q, &k, &v, &out, &lse;  // the forward call's inputs and outputs
  const TensorView &dout, &dq, &dk, &dv;    // d loss / d out, and the gradients written
};

// Adds one problem per mistake in dout, dq, dk and dv: the kernel's dtype, placement (host memory
// for a cpu kernel; for a CUDA one, device memory next to q under q's layout rules), the shape of
// q (dout, dq) or k (dk, dv) when `shape` says q and k are 4-D, and no rows of an output sharing
// memory.
void check_backward_tensors(const BackwardTensors& t, const std::optional<AttentionShape>& shape, DType dtype,
                            Problems& problems, Memory memory = Memory::host);

// Adds one problem per mistake in `grads`: a name that is not a float tensor read by score_mod or
// sink (ir/gradient_captures.hpp), a tensor that is not f32, not in host memory, not of
// the bound tensor's shape (when `env` binds it), or with elements sharing memory. For a CUDA
// kernel (Memory::cuda): device memory next to `device`'s tensors, 4-byte aligned and contiguous
// (the backward zeroes it in one stream-ordered memset before accumulating).
void check_gradient_targets(const ir::Program& program, const std::map<std::string, TensorView>& grads,
                            const ir::Env& env, Problems& problems, Memory memory = Memory::host,
                            const Device& device = Device::cpu());

}  // namespace flexjit::api

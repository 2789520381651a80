// Kernel::backward for a cpu kernel: the forward's argument checks (with host placement), those of
// dout, dq, dk, dv and BackwardOptions::grads (api/backward_checks.hpp), then the CPU back end's
// backward (cpu/attention_backward.hpp) on float32 copies, and the gradients written back.
#pragma once

#include "api/backward_checks.hpp"
#include "api/kernel_impl.hpp"
#include "flexjit/options.hpp"

namespace flexjit::api {

// Throws ArgumentError naming each problem before anything runs, and ArgumentError for what only
// running finds (a captured tensor indexed out of its bounds, a block list entry out of range);
// UnsupportedError when score_mod or sink cannot be differentiated, and for an fp8_e4m3 kernel.
void cpu_backward(const Kernel::Impl& kernel, const BackwardTensors& tensors, const BackwardOptions& options);

}  // namespace flexjit::api

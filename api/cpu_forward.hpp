// Kernel::forward for a cpu kernel: the same argument checks as the CUDA launch (with host
// placement rules), and those of a KV cache (kv_lens, page_table), then the CPU back end
// (cpu/attention.hpp) on float32 copies of the inputs.
#pragma once

#include "flexjit/kernel.hpp"
#include "flexjit/options.hpp"
#include "api/attention_launch.hpp"

namespace flexjit::api {

// Throws ArgumentError naming each problem before anything runs, and ArgumentError for what the
// values themselves get wrong (a captured tensor indexed out of its bounds, a block list entry out
// of range), which only running finds.
void cpu_forward(const Kernel::Impl& kernel, const ForwardTensors& tensors, const ForwardOptions& options);

}  // namespace flexjit::api

// Kernel::forward for a cpu kernel: the same argument checks as the CUDA launch (with host
// placement rules), and those of a KV cache (kv_lens, page_table) and of fp8 descale factors, then
// the CPU back end (cpu/attention.hpp) on float32 copies of the inputs (fp8 ones descaled).
#pragma once

#include <optional>
#include <vector>

#include "api/common_args.hpp"
#include "api/forward_checks.hpp"
#include "cpu/attention.hpp"
#include "flexjit/kernel.hpp"
#include "flexjit/options.hpp"

namespace flexjit::api {

// Throws ArgumentError naming each problem before anything runs (UnsupportedError first for a KV
// cache on an fp8_e4m3 kernel), and ArgumentError for what the values themselves get wrong (a
// captured tensor indexed out of its bounds, a block list entry out of range), which only running
// finds.
void cpu_forward(const Kernel::Impl& kernel, const ForwardTensors& tensors, const ForwardOptions& options);

// q, k and v as float32 copies and the back end's inputs pointing at them (sizes, scale,
// bindings), what the cpu forward and backward both start from.
struct HostAttentionInputs {
  HostAttentionInputs(const ForwardTensors& t, const AttentionShape& shape, std::optional<float> scale,
                      const ir::Env& env);
  HostAttentionInputs(const HostAttentionInputs&) = delete;
  HostAttentionInputs& operator=(const HostAttentionInputs&) = delete;
  std::vector<float> q, k, v;
  cpu::CpuAttentionInputs in;
};

}  // namespace flexjit::api

#pragma once
// The translation unit of a forward kernel, as every family writes it: a header comment (program,
// target, the family's tile description, math mode), the template includes, the Mods struct, the
// family's config and the extern "C" entry (plus the tile-map builder's when the plan has one).
#include <string>

#include "codegen/generated_kernel.hpp"
#include "compiler/plan.hpp"

namespace flexjit::codegen {

struct ForwardEntry {
  std::string description;  // "tile 128x32, 4 warps, 2 stages, Q re-read from shared memory"
  std::string config;       // the config type: "flexjit::FwdConfig<128, 128, 32, ...>"
  std::string min_blocks;   // __launch_bounds__' second argument: "Cfg::kMinBlocksPerSM", "1"
  std::string kernel;       // the template function: "flexjit::attention_fwd_sm80"
};

// Fills k.source; k's entry, headers, tile, threads, shared bytes and tensor_maps must be set.
void write_forward_source(const compiler::KernelPlan& plan, const ForwardEntry& entry, GeneratedKernel& k);

}  // namespace flexjit::codegen

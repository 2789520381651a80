#pragma once
// A forward kernel as every family generates it: the GeneratedKernel's common fields (entry name,
// includes, params, tile map) and its translation unit: a header comment (program, target, the
// family's tile description, math mode), the template includes, the Mods struct, the family's
// config and the extern "C" entry (plus the tile-map builder's when the plan has one).
#include <string>

#include "codegen/cuda_writer.hpp"
#include "codegen/generated_kernel.hpp"
#include "compiler/plan.hpp"

namespace flexjit::codegen {

struct ForwardEntry {
  std::string family;       // KernelFamily::name()
  TileConfig tile;
  int shared_bytes = 0;     // dynamic shared memory per CTA
  std::string templates;    // the family's kernel template: "sm80/attention_fwd.cuh"
  bool tensor_maps = false;  // the kernel takes TmaMaps as its third argument
  std::string description;  // "tile 128x32, 4 warps, 2 stages, Q re-read from shared memory"
  std::string config;       // the config type: "flexjit::FwdConfig<128, 128, 32, ...>"
  std::string min_blocks;   // __launch_bounds__' second argument: "Cfg::kMinBlocksPerSM", "1"
  std::string kernel;       // the template function: "flexjit::attention_fwd_sm80"
  // The chunk pass (a chunk of new tokens against a KV cache): the kernel takes flexjit::ChunkArgs
  // and classifies its tiles itself (no tile-map builder); its entry is flexjit_chunk_*.
  bool chunk = false;
  // A pre-pass launched before the main kernel with the same AttnArgs (EntryRole::prep, entry
  // `<main>_prep`): the template function, e.g. "flexjit::transpose_v_e4m3" (the FP8 forward's
  // v transposed); empty: none. prep_threads: its CTA's threads.
  std::string prep_kernel = "";
  int prep_threads = 0;
};

GeneratedKernel generate_forward(const compiler::KernelPlan& plan, const ForwardEntry& entry);

// The fields of a GeneratedKernel every pass fills alike from its plan: family, target, tile, the
// params' layout, whether the kv range is closed, tensor maps (entries, headers and source are the
// pass's).
GeneratedKernel kernel_for(const compiler::KernelPlan& plan, const std::string& family, const TileConfig& tile,
                           bool tensor_maps);

// The first lines of every generated translation unit: where it comes from, what it computes
// (`what`: "Forward attention", "Decode against a KV cache"), the family and its tile, the math
// mode, the naming rule, then the #includes of `headers`.
void write_preamble(CudaWriter& w, const compiler::KernelPlan& plan, const std::string& what,
                    const std::string& family, const std::string& description,
                    const std::vector<std::string>& headers);

// `using Cfg = config;` and the static_asserts that tie the template's shared memory and threads
// to the main entry point's (what the launches use).
void write_config(CudaWriter& w, const std::string& config, const EntryPoint& main);

}  // namespace flexjit::codegen

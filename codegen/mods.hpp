#pragma once
// The mods emitter: a plan's mask_mod, score_mod and sink, its per-tile classifier, closed-form kv
// range (and q range, its transpose), block list and tile-map classifier as one `Mods` policy struct in namespace
// fj_generated. Every kernel family includes the templates of templates/common/ and instantiates
// its own kernel template with this struct; docs/design.md states the contract.
#include "codegen/cuda_writer.hpp"
#include "codegen/generated_kernel.hpp"
#include "compiler/plan.hpp"

namespace flexjit::codegen {

// Writes `namespace fj_generated { struct Mods { ... }; static_asserts on its Params layout }`.
void emit_mods(const compiler::KernelPlan& plan, CudaWriter& w);

// The tile-map builder (templates/common/tile_map.cuh), for plans whose mask reads tensors (and
// the backward's for block lists): add_tile_map_entry adds its entry point (the kernel's name +
// `suffix`, whose main entry is set) with the map's axes and header; emit_tile_map_entry writes
// it, calling `builder` (flexjit::build_tile_map: a row per query tile; build_q_tile_map: a row
// per kv tile) with the Cfg's tile, and Mods::Extents when the mask reads tensors.
inline constexpr int kTileMapThreads = 256;
void add_tile_map_entry(GeneratedKernel& k, const std::string& suffix, bool per_batch, bool per_head);
void emit_tile_map_entry(const GeneratedKernel& k, const std::string& builder, bool reads_tensors,
                         std::vector<std::string> comment, CudaWriter& w);

}  // namespace flexjit::codegen

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

// The tile-map builder's entry point (templates/common/tile_map.cuh), for plans whose mask reads
// tensors: classifies every (query tile, kv tile) pair of a kernel with block_m x block_n tiles.
inline constexpr int kTileMapThreads = 256;
void emit_tile_map_entry(const std::string& entry, const std::string& block_m, const std::string& block_n,
                         CudaWriter& w);

// For plans that need a tile map: the builder's header, entry name and launch facts in `k`
// (whose entry is set). Nothing for other plans.
void describe_tile_map(const compiler::KernelPlan& plan, GeneratedKernel& k);

}  // namespace flexjit::codegen

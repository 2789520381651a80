// Block masks on the runtime side: planning and launching the generated tile-map builder
// (templates/common/tile_map.cuh), and checking a built map against a forward call before the attention
// kernel is pointed at it. Planning is host only, like plan_forward: bad input is reported the
// same with or without a GPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/families.hpp"
#include "flexjit/block_mask.hpp"
#include "flexjit/options.hpp"
#include "api/argument_problems.hpp"
#include "api/attention_launch.hpp"
#include "api/launch_plan.hpp"
#include "api/param_packing.hpp"

namespace flexjit::api {


struct MaskShape {
  int B, Hq, Tq, Tkv;
};

// Bytes of a map for `shape` (counts, then entries; see flexjit/block_mask.hpp).
std::size_t tile_map_bytes(const codegen::GeneratedKernel& kernel, const MaskShape& shape);

struct TileMapPlan {
  TileMapArgs args{};
  PackedParams params;
  std::vector<long long> extents;  // Mods::Extents
  std::array<unsigned, 3> grid{};
  BlockMask mask;  // what the caller gets back once the launch is enqueued
};

// Checks the kernel (it must have a builder), the shape, the storage and the bindings; throws
// flexjit::ArgumentError naming every problem.
TileMapPlan plan_tile_map(const codegen::GeneratedKernel& kernel, const ir::Program& program,
                          const TensorView& storage, const MaskShape& shape, const BlockMaskOptions& options);

// One launch of the builder entry (a CTA per query tile of each map).
LaunchPlan tile_map_launch_plan(const codegen::GeneratedKernel& kernel, TileMapPlan& plan);
void launch_tile_map(const CompiledKernel& kernel, TileMapPlan& plan, void* stream);

// A map passed to forward: built by this kernel, for this shape, these positions and these scalar
// values and tensor shapes, on this device.
void check_block_mask(const codegen::GeneratedKernel& kernel, const BlockMask& mask, const MaskShape& shape,
                      CallPositions positions, const Device& device, const ir::Env& env, Problems& problems);
// The fingerprints a built map records (BlockMask::kernel_id, bindings_id).
std::uint64_t block_mask_kernel_id(const codegen::GeneratedKernel& kernel);
std::uint64_t block_mask_bindings_id(const ir::Env& env);

// Points the attention kernel's arguments at a checked map.
void attach_block_mask(const BlockMask& mask, AttnArgs& args);

}  // namespace flexjit::api

#pragma once
// The sm90 forward family's tile rules (the table itself is templates/sm90/tiles.cuh).
#include <string>

#include "codegen/generated_kernel.hpp"
#include "compiler/target.hpp"

namespace flexjit::codegen::sm90_fwd {

// Why a requested tile (CompileOptions::tile) cannot run in this family; empty when it can.
std::string tile_refusal(const compiler::KernelTarget& target);

// The table's tile for the target's head dim, or target.tile when given (tile_refusal first).
TileConfig choose_tile(const compiler::KernelTarget& target);

// Dynamic shared memory of templates/sm90/attention_fwd.cuh for a tile.
int shared_bytes(const TileConfig& tile, int head_dim);

}  // namespace flexjit::codegen::sm90_fwd

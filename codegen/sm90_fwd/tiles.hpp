#pragma once
// The sm90 forward family's tile rules (the table itself is templates/sm90/tiles.cuh).
#include <optional>
#include <string>

#include "codegen/generated_kernel.hpp"
#include "compiler/target.hpp"
#include "ir/ir.hpp"

namespace flexjit::codegen::sm90_fwd {

// Why a requested tile (CompileOptions::tile) cannot run in this family; empty when it can.
std::string tile_refusal(const compiler::KernelTarget& target);

// The table's tile for the target's head dim (one that divides the program's block-sparse blocks
// when the default does not), or target.tile when given (tile_refusal first).
TileConfig choose_tile(const compiler::KernelTarget& target, const ir::Program& program);

// The next tile to try for mods whose temporaries spill in `chosen`: three consumer warpgroups
// (160 registers a thread) become two (240); then 128-key tiles become 64-key ones (half the S
// and P registers). None after that. The engine follows this chain only for the table's choice,
// never for a tile the caller asked for.
std::optional<compiler::TileRequest> tile_if_spills(const compiler::KernelTarget& target, const TileConfig& chosen);

// Dynamic shared memory of templates/sm90/attention_fwd.cuh for a tile of the target's head dims.
int shared_bytes(const TileConfig& tile, const compiler::KernelTarget& target);

}  // namespace flexjit::codegen::sm90_fwd

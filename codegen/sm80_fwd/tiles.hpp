#pragma once
// The sm80 forward family's tile table and tile rules (bench/NOTES.md and bench/tile-sweep keep
// the measurements behind the table).
#include "codegen/generated_kernel.hpp"
#include "compiler/target.hpp"

namespace flexjit::codegen::sm80_fwd {

// Dynamic shared memory of templates/sm80/attention_fwd.cuh (FwdConfig::kSmemBytes) for a tile.
int shared_bytes(const TileConfig& tile, int head_dim);

// The table's tile for the target's head dim, or target.tile when given (throws flexjit::Error
// naming the constraint a requested tile breaks).
TileConfig choose_tile(const compiler::KernelTarget& target);

// For a block-sparse program (`BlockIndices[q_block, kv_block]`): the tile shrunk until a query
// tile lies inside one query block (q_block % block_m == 0) and a kv block is a whole number of kv
// tiles (kv_block % block_n == 0). Throws flexjit::Error when no tile fits (the block sizes must
// be positive multiples of 16).
TileConfig choose_block_sparse_tile(const compiler::KernelTarget& target, int q_block, int kv_block);

}  // namespace flexjit::codegen::sm80_fwd

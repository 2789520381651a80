#pragma once
// Which kernel family and tile shape to generate for a (head dim, dtype, arch). The table in
// kernel_config.cpp is the single place tile choices live; bench/ keeps the tuning behind it.
#include <optional>
#include <string>

namespace flexjit::codegen {

enum class ElementType { BF16, FP16 };
const char* element_name(ElementType t);      // "bf16", "fp16"
const char* element_cuda_type(ElementType t); // "flexjit::bf16_t", "flexjit::fp16_t"

struct TileConfig {
  int block_m, block_n, warps, stages;
  bool q_in_registers;
  int min_blocks_per_sm;  // __launch_bounds__ occupancy hint: CTAs per SM the registers must allow
  int threads() const { return warps * 32; }
  // Dynamic shared memory of the sm80 forward template for this tile and head dim.
  int shared_bytes(int head_dim) const;
};

// A requested tile (CompileOptions::tile, for tuning): rows and keys per tile, warps, ring depth.
struct TileRequest {
  int block_m, block_n, warps, stages;
  bool q_in_registers = false;
};

struct KernelSpec {
  int head_dim = 128;
  ElementType dtype = ElementType::BF16;
  std::string arch = "sm_90a";  // NVRTC architecture name: sm_80, sm_86, sm_89, sm_90a, ...
  std::optional<TileRequest> tile = std::nullopt;  // empty: the table's choice
};

// Throws flexjit::UnsupportedError naming the problem for unsupported head dims or archs.
void validate(const KernelSpec& spec);
// The table's tile for the head dim, or spec.tile when given (throws flexjit::UnsupportedError naming
// the constraint a requested tile breaks).
TileConfig choose_tile_config(const KernelSpec& spec);
// For a block-sparse program (`BlockIndices[q_block, kv_block]`): the default tile shrunk until a
// query tile lies inside one query block (q_block % block_m == 0) and a kv block is a whole number
// of kv tiles (kv_block % block_n == 0). Throws flexjit::UnsupportedError when no tile fits (the block
// sizes must be positive multiples of 16).
TileConfig choose_block_sparse_tile_config(const KernelSpec& spec, int q_block, int kv_block);

}  // namespace flexjit::codegen

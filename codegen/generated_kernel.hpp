#pragma once
// What a kernel family hands back: the generated translation unit and everything the host needs
// to compile and launch it. Plain data; the API keeps it for the kernel's lifetime.
#include <optional>
#include <string>
#include <vector>

#include "compiler/grad_layout.hpp"
#include "compiler/param_layout.hpp"
#include "compiler/target.hpp"

namespace flexjit::codegen {

// The forward tile of the generated kernel: query rows and keys per tile, warps per CTA, depth of
// the K/V ring, whether Q stays in registers, the CTAs per SM its registers must allow, and
// whether the grid is persistent.
struct TileConfig {
  int block_m, block_n, warps, stages;
  bool q_in_registers;
  int min_blocks_per_sm;
  bool persistent = false;  // one wave of CTAs that take query tiles from a counter (sm90_fwd)
  int threads() const { return warps * 32; }
};

struct GeneratedKernel {
  std::string family;                // the family that generated it ("sm80_fwd")
  std::string entry;                 // extern "C" kernel name
  std::string source;                // the generated translation unit
  std::vector<std::string> headers;  // template headers it includes (embedded in the library)
  compiler::KernelTarget target;
  TileConfig tile;
  int threads = 0;                   // per CTA
  int shared_bytes = 0;              // dynamic shared memory per CTA
  compiler::ParamLayout params;      // layout of Mods::Params (second kernel argument)
  bool kv_range_is_full = true;      // true when the mask gives no closed-form kv bound
  // The kernel takes a third argument, flexjit::TmaMaps (templates/common/kernel_args.cuh), that
  // the host encodes per launch (api/tma_maps.hpp).
  bool tensor_maps = false;
  // Masks that read captured tensors get a tile-map builder in the same translation unit
  // (templates/common/tile_map.cuh); empty for index-arithmetic masks. A forward's builds the map
  // Kernel::build_block_mask returns; a backward's (sm80_bwd: block lists too) the transposed map
  // each Kernel::backward call builds for itself.
  std::string tile_map_entry;
  int tile_map_threads = 0;
  bool tile_map_per_batch = false;   // the mask reads b: one map per batch entry
  bool tile_map_per_head = false;    // the mask reads h: one map per query head
  // Decode kernels: the entry that merges the splits' partial rows (templates/decode), with its
  // threads per CTA; empty for the forward families.
  std::string combine_entry;
  int combine_threads = 0;
  // Backward kernels (templates/sm80/attention_bwd.cuh): the pre-pass (delta, lse2, dQ zeroing,
  // the sink's gradient) and the post-pass (dQ to the element type), pass_threads each, and the
  // main kernel that also scatter-adds the captured tensors' gradients (grads_entry: empty when
  // score_mod reads no captured float tensor). entry is the main kernel without the scatter.
  std::string prep_entry;
  std::string post_entry;
  std::string grads_entry;
  int pass_threads = 0;
  int pass_rows = 0;                 // query rows per CTA of the pre- and post-pass
  compiler::GradLayout grads;        // layout of Mods::Grads (third argument of every backward kernel)
  // The tile to generate again with when ptxas reports spills for this one (a family whose
  // table's choices are tight on registers for heavy mods); none when there is no smaller tile.
  // Engine::compile follows it only when CompileOptions::tile was not given.
  std::optional<compiler::TileRequest> tile_if_spills;
};

}  // namespace flexjit::codegen

#pragma once
// What a kernel family hands back: the generated translation unit and everything the host needs
// to compile and launch it. Plain data; the API keeps it for the kernel's lifetime.
#include <cstdint>
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

// The kernels of one translation unit and what each is for: the pass's main kernel first, then
// the passes around it. The launch plans (api/launch_plan.hpp) name them by role.
enum class EntryRole : std::uint8_t {
  main,      // the forward, backward or decode kernel itself
  grads,     // backward: the main kernel that also scatter-adds captured tensors' gradients
  prep,      // backward: the pre-pass (delta, lse2, dQ zeroing, the sink's gradient)
  post,      // backward: the post-pass (dQ to the element type)
  tile_map,  // the tile-map builder (templates/common/tile_map.cuh): the forward's per query tile,
             // the backward's transposed one per kv tile
  combine,   // decode: merges the splits' partial rows
};
const char* entry_role_name(EntryRole role);

struct EntryPoint {
  EntryRole role;
  std::string name;      // extern "C" kernel name
  int threads = 0;       // per CTA
  int shared_bytes = 0;  // dynamic shared memory per CTA
};

struct GeneratedKernel {
  std::string family;                // the family that generated it ("sm80_fwd")
  std::string source;                // the generated translation unit
  std::vector<std::string> headers;  // template headers it includes (embedded in the library)
  compiler::KernelTarget target;
  TileConfig tile;
  std::vector<EntryPoint> entries;   // the main entry first
  compiler::ParamLayout params;      // layout of Mods::Params (second kernel argument)
  bool kv_range_is_full = true;      // true when the mask gives no closed-form kv bound
  // The kernel takes a third argument, flexjit::TmaMaps (templates/common/kernel_args.cuh), that
  // the host encodes per launch (api/tma_maps.hpp).
  bool tensor_maps = false;
  // A tile-map builder (EntryRole::tile_map) makes one map per batch entry when the mask reads b,
  // one per query head when it reads h. A forward's builds the map Kernel::build_block_mask
  // returns; a backward's (sm80_bwd: block lists too) the transposed map each Kernel::backward
  // call builds for itself.
  bool tile_map_per_batch = false;
  bool tile_map_per_head = false;
  int pass_rows = 0;                 // backward: query rows per CTA of the pre- and post-pass
  // Decode pass: the fewest keys a split of the main kernel walks, where the family's CTAs share
  // each chunk (its fixed cost per CTA against the walk); 0: the launch's default per warp.
  int split_min_keys = 0;
  compiler::GradLayout grads;        // layout of Mods::Grads (third argument of every backward kernel)
  // The tile to generate again with when ptxas reports spills for this one (a family whose
  // table's choices are tight on registers for heavy mods); none when there is no smaller tile.
  // Engine::compile follows it only when CompileOptions::tile was not given.
  std::optional<compiler::TileRequest> tile_if_spills;

  // The kernel's name: its main entry's.
  const std::string& entry() const { return entries.front().name; }
  const EntryPoint& main_entry() const { return entries.front(); }
  // The entry point of `role`, or null / InternalError when there is none.
  const EntryPoint* find_entry(EntryRole role) const;
  const EntryPoint& entry_point(EntryRole role) const;
  bool has_entry(EntryRole role) const { return find_entry(role) != nullptr; }
};

}  // namespace flexjit::codegen

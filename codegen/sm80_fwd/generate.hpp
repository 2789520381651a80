#pragma once
// Program IR -> the CUDA source of a forward attention kernel: a `Mods` policy struct (the
// user's mask_mod, score_mod and sink, the per-tile classifier, the closed-form kv range,
// captures and runtime scalars as kernel parameters), the tile configuration, and an
// extern "C" entry point instantiating templates/attention_fwd_sm80.cuh.
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "codegen/sm80_fwd/tiles.hpp"
#include "compiler/param_layout.hpp"
#include "dsl/source.hpp"

namespace flexjit::codegen {

struct GeneratedKernel {
  std::string entry;                 // extern "C" kernel name
  std::string source;                // the generated translation unit
  std::vector<std::string> headers;  // template headers it includes (embedded in the library)
  KernelSpec spec;
  TileConfig tile;
  compiler::ParamLayout params;                // layout of Mods::Params (second kernel argument)
  bool kv_range_is_full = true;      // true when the mask gives no closed-form kv bound
  // Masks that read captured tensors get a tile-map builder (templates/tile_map.cuh) in the same
  // translation unit; empty when the mask is index arithmetic only (closed-form ranges suffice).
  std::string tile_map_entry;
  int tile_map_threads = 0;
  bool tile_map_per_batch = false;   // the mask reads b: one map per batch entry
  bool tile_map_per_head = false;    // the mask reads h: one map per query head
};

// True when the program's mask_mod reads a captured tensor (and it has no block-index list,
// which already decides the visited tiles).
bool needs_tile_map(const ir::Program& program);

// `source` (optional) lets the generated code quote the program's lines in comments.
GeneratedKernel generate_forward_kernel(const ir::Program& program, const KernelSpec& spec,
                                        const dsl::SourceFile* source = nullptr);

}  // namespace flexjit::codegen

#include "codegen/sm80_bwd/family.hpp"

#include <fmt/format.h>

#include <optional>

#include "codegen/cuda_writer.hpp"
#include "codegen/forward_source.hpp"
#include "codegen/mma_sync_target.hpp"
#include "codegen/mods.hpp"
#include "flexjit/error.hpp"
#include "templates/sm80/bwd_tiles.cuh"

namespace flexjit::codegen::sm80_bwd {
namespace {

using flexjit::sm80::BwdTile;

// The requested tile (the engine's retry after spills) or the table's, and for a block-list
// program the largest below it that puts each query tile inside one query block and each block of
// keys inside one kv block (what the schedule's membership test relies on); nullopt when none fits.
std::optional<BwdTile> choose_tile(const compiler::KernelTarget& t, const ir::Program& program) {
  const BwdTile first = t.tile ? BwdTile{t.tile->block_n, t.tile->block_m, t.tile->warps, t.tile->stages}
                               : flexjit::sm80::default_bwd_tile(t.head_dim);
  if (!program.block_indices) return first;
  const int qb = program.block_indices->q_block, kb = program.block_indices->kv_block;
  for (int bn = first.block_n; bn >= 16; bn /= 2) {
    if (kb % bn != 0) continue;
    for (int bm = first.block_m; bm >= 16; bm /= 2) {
      const BwdTile c{bn, bm, bn / 16, first.stages};
      if (qb % bm == 0 && flexjit::sm80::bwd_tile_fits(c, t.head_dim)) return c;
    }
  }
  return std::nullopt;
}

// The table's second tile for this head dim, when the first was chosen and the second differs.
std::optional<compiler::TileRequest> tile_if_spills(const compiler::KernelTarget& t, const BwdTile& chosen) {
  if (t.tile) return std::nullopt;
  const BwdTile next = flexjit::sm80::bwd_tile_if_spills(t.head_dim);
  if (next.block_m >= chosen.block_m) return std::nullopt;
  return compiler::TileRequest{next.block_m, next.block_n, next.warps, next.stages, false};
}

// Whether score_mod reads a captured float tensor that can have a gradient: then the main kernel
// has a second entry that scatter-adds it.
bool score_scatters(const compiler::KernelPlan& plan) {
  if (!plan.score_derivatives) return false;
  for (const auto& l : plan.score_derivatives->loads)
    if (plan.grads.find(l.tensor)) return true;
  return false;
}

// Masks that read tensors (documents, tables) and block lists (top-k) are scheduled by a
// transposed tile map that the backward builds per call (templates/common/tile_map.cuh,
// build_q_tile_map): the main kernel then walks only the query tiles that reach its keys, with
// the classes the tensors' values give, instead of classifying (and reading block lists for)
// every query tile of its q range itself. A block list is indexed by b and h, so its map is too.
void describe_q_tile_map(const compiler::KernelPlan& plan, GeneratedKernel& k) {
  const bool lists = plan.program->block_indices.has_value();
  if (!plan.tile_map.needed && !lists) return;
  k.headers.push_back("common/tile_map.cuh");
  k.tile_map_entry = k.entry + "_q_tile_map";
  k.tile_map_threads = kTileMapThreads;
  k.tile_map_per_batch = lists || plan.tile_map.per_batch;
  k.tile_map_per_head = lists || plan.tile_map.per_head;
}

// The builder's entry; it takes Mods::Extents when the mask reads tensors (the box reads).
void q_tile_map_entry(CudaWriter& w, const std::string& name, bool reads_tensors) {
  w.line();
  w.line("// The transposed tile map: per kv tile, the query tiles that reach it, classified (common/tile_map.cuh).");
  w.line(fmt::format("extern \"C\" __global__ void __launch_bounds__({})", kTileMapThreads));
  w.line(fmt::format("{}(const __grid_constant__ flexjit::TileMapArgs margs,", name));
  if (reads_tensors) {
    w.line("    const __grid_constant__ fj_generated::Mods::Params params,");
    w.line("    const __grid_constant__ fj_generated::Mods::Extents extents) {");
  } else {
    w.line("    const __grid_constant__ fj_generated::Mods::Params params) {");
    w.line("  const flexjit::NoExtents extents;");
  }
  w.line(fmt::format("  flexjit::build_q_tile_map<fj_generated::Mods, Cfg::kBlockM, Cfg::kBlockN, {}>(margs, params, extents);",
                     kTileMapThreads / 32));
  w.line("}");
}

class Sm80Backward final : public KernelFamily {
 public:
  const char* name() const override { return "sm80_bwd"; }
  compiler::KernelPass pass() const override { return compiler::KernelPass::Backward; }

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    std::string why = mma_sync_refusal(t);
    if (!why.empty()) return why;
    if (!flexjit::sm80::bwd_serves_head_dim(t.head_dim))
      return fmt::format("head dim {} is above 128 (dK and dV of a warp's keys must fit in registers)", t.head_dim);
    if (program.block_indices && !choose_tile(t, program))
      return fmt::format("block sizes {} x {} are not multiples of 16", program.block_indices->q_block,
                         program.block_indices->kv_block);
    return "";
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& t = plan.target;
    const std::optional<BwdTile> chosen = choose_tile(t, *plan.program);
    if (!chosen || !flexjit::sm80::bwd_tile_fits(*chosen, t.head_dim))
      throw ArgumentError(fmt::format("backward tile {}x{} with {} warps does not fit head dim {} (keys = 16 x warps, "
                                      "whole m16 query tiles)",
                                      t.tile ? t.tile->block_n : 0, t.tile ? t.tile->block_m : 0,
                                      t.tile ? t.tile->warps : 0, t.head_dim));
    const BwdTile tile = *chosen;
    GeneratedKernel k;
    k.family = name();
    k.target = t;
    k.tile = {tile.block_m, tile.block_n, tile.warps, tile.stages, false, 1};
    k.threads = tile.warps * 32;
    k.shared_bytes = flexjit::sm80::bwd_smem_bytes(t.head_dim, tile.block_n, tile.block_m, tile.stages);
    k.params = plan.params;
    k.grads = plan.grads;
    k.tile_if_spills = tile_if_spills(t, tile);
    k.kv_range_is_full = plan.kv_range_full;
    k.entry = fmt::format("flexjit_bwd_{}_d{}_{}", plan.name, t.head_dim, compiler::element_name(t.dtype));
    k.prep_entry = k.entry + "_prep";
    k.post_entry = k.entry + "_post";
    if (score_scatters(plan)) k.grads_entry = k.entry + "_grads";
    k.pass_threads = flexjit::sm80::kBwdPassThreads;
    k.pass_rows = flexjit::sm80::kBwdPassRows;
    k.headers = {"common/attention_common.cuh", "sm80/attention_bwd.cuh", "common/dsl_ops.cuh", "common/interval.cuh"};
    describe_q_tile_map(plan, k);

    CudaWriter w(plan.source);
    write_preamble(w, plan, "Backward attention (dQ, dK, dV and captured tensors' gradients)", k.family,
                   fmt::format("{} keys per CTA ({} warps of 16) against query tiles of {} rows, {} stages, dQ by "
                               "fp32 atomics",
                               tile.block_n, tile.warps, tile.block_m, tile.stages),
                   k.headers);
    emit_mods(plan, w);
    w.line(fmt::format("using Cfg = flexjit::BwdConfig<{}, {}, {}, {}, {}, {}>;", t.head_dim, tile.block_n,
                       tile.block_m, tile.warps, tile.stages, compiler::element_cuda_type(t.dtype)));
    w.line(fmt::format("static_assert(Cfg::kSmemBytes == {}, \"shared memory size\");", k.shared_bytes));
    w.line(fmt::format("static_assert(Cfg::kThreads == {}, \"threads per CTA\");", k.threads));
    const bool sink_scatters = plan.sink_derivatives && !plan.grads.fields.empty();
    entry(w, k.prep_entry, "flexjit::sm80::kBwdPassThreads",
          fmt::format("flexjit::bwd_prep<fj_generated::Mods, Cfg, {}>(args, params, grads);", sink_scatters));
    entry(w, k.entry, "Cfg::kThreads", "flexjit::attention_bwd_sm80<fj_generated::Mods, Cfg, false>(args, params, grads);");
    if (!k.grads_entry.empty())
      entry(w, k.grads_entry, "Cfg::kThreads",
            "flexjit::attention_bwd_sm80<fj_generated::Mods, Cfg, true>(args, params, grads);");
    entry(w, k.post_entry, "flexjit::sm80::kBwdPassThreads", "flexjit::bwd_post<fj_generated::Mods, Cfg>(args);");
    if (!k.tile_map_entry.empty()) q_tile_map_entry(w, k.tile_map_entry, plan.tile_map.needed);
    k.source = w.str();
    return k;
  }

 private:
  static void entry(CudaWriter& w, const std::string& name, const std::string& threads, const std::string& body) {
    w.line();
    w.line(fmt::format("extern \"C\" __global__ void __launch_bounds__({}, 1)", threads));
    w.line(fmt::format("{}(const __grid_constant__ flexjit::BwdArgs args,", name));
    w.line("    const __grid_constant__ fj_generated::Mods::Params params,");
    w.line("    const __grid_constant__ fj_generated::Mods::Grads grads) {");
    w.line("  (void)params;");
    w.line("  (void)grads;");
    w.line(fmt::format("  {}", body));
    w.line("}");
  }
};

}  // namespace

const KernelFamily& family() {
  static const Sm80Backward instance;
  return instance;
}

}  // namespace flexjit::codegen::sm80_bwd

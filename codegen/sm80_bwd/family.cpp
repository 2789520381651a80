#include "codegen/sm80_bwd/family.hpp"

#include <fmt/format.h>

#include <optional>

#include "codegen/cuda_writer.hpp"
#include "codegen/entry_writer.hpp"
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
  const BwdTile first = t.tile ? BwdTile{t.tile->block_m, t.tile->block_n, t.tile->warps, t.tile->stages}
                               : flexjit::sm80::default_bwd_tile(t.head_dim);
  if (!program.block_indices) return first;
  const int qb = program.block_indices->q_block, kb = program.block_indices->kv_block;
  for (int bn = first.block_n; bn >= 16; bn /= 2) {
    if (kb % bn != 0) continue;
    for (int bm = first.block_m; bm >= 16; bm /= 2) {
      const BwdTile c{bm, bn, bn / 16, first.stages};
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
  return compiler::TileRequest{
      .block_m = next.block_m, .block_n = next.block_n, .warps = next.warps, .stages = next.stages};
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
bool needs_q_tile_map(const compiler::KernelPlan& plan) {
  return plan.tile_map.needed || plan.program->block_indices.has_value();
}

class Sm80Backward final : public MmaSyncFamily {
 public:
  Sm80Backward() : MmaSyncFamily("sm80_bwd", compiler::KernelPass::Backward) {}

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    std::string why = MmaSyncFamily::refusal(t, program);
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
    k.tile = {.block_m = tile.block_m,
              .block_n = tile.block_n,
              .warps = tile.warps,
              .stages = tile.stages,
              .q_in_registers = false,
              .min_blocks_per_sm = 1};
    k.params = plan.params;
    k.grads = plan.grads;
    k.tile_if_spills = tile_if_spills(t, tile);
    k.kv_range_is_full = plan.kv_range_full;
    const std::string entry = fmt::format("flexjit_bwd_{}_d{}_{}", plan.name, t.head_dim, compiler::element_name(t.dtype));
    const int threads = tile.warps * 32;
    const int smem = flexjit::sm80::bwd_smem_bytes(t.head_dim, tile.block_m, tile.block_n, tile.stages);
    const int pass_threads = flexjit::sm80::kBwdPassThreads;
    k.entries = {{EntryRole::main, entry, threads, smem}, {EntryRole::prep, entry + "_prep", pass_threads, 0}};
    if (score_scatters(plan)) k.entries.push_back({EntryRole::grads, entry + "_grads", threads, smem});
    k.entries.push_back({EntryRole::post, entry + "_post", pass_threads, 0});
    k.pass_rows = flexjit::sm80::kBwdPassRows;
    k.headers = {"common/attention_common.cuh", "sm80/attention_bwd.cuh", "common/dsl_ops.cuh", "common/interval.cuh"};
    const bool lists = plan.program->block_indices.has_value();
    if (needs_q_tile_map(plan))
      add_tile_map_entry(k, "_q_tile_map", lists || plan.tile_map.per_batch, lists || plan.tile_map.per_head);

    CudaWriter w(plan.source);
    write_preamble(w, plan, "Backward attention (dQ, dK, dV and captured tensors' gradients)", k.family,
                   fmt::format("{} keys per CTA ({} warps of 16) against query tiles of {} rows, {} stages, dQ by "
                               "fp32 atomics",
                               tile.block_n, tile.warps, tile.block_m, tile.stages),
                   k.headers);
    emit_mods(plan, w);
    write_config(w, fmt::format("flexjit::BwdConfig<{}, {}, {}, {}, {}, {}>", t.head_dim, tile.block_m, tile.block_n,
                                tile.warps, tile.stages, compiler::element_cuda_type(t.dtype)),
                 k.main_entry());
    const bool sink_scatters = plan.sink_derivatives && !plan.grads.fields.empty();
    const auto pass = [&](EntryRole role, const std::string& threads, const std::string& call) {
      write_entry(w, {.name = k.entry_point(role).name,
                      .threads = threads,
                      .min_blocks = "1",
                      .params = {{"flexjit::BwdArgs", "args"}, mods_params(), {"fj_generated::Mods::Grads", "grads"}},
                      .body = {"(void)params;", "(void)grads;", call}});
    };
    pass(EntryRole::prep, "flexjit::sm80::kBwdPassThreads",
         fmt::format("flexjit::bwd_prep<fj_generated::Mods, Cfg, {}>(args, params, grads);", sink_scatters));
    pass(EntryRole::main, "Cfg::kThreads", "flexjit::attention_bwd_sm80<fj_generated::Mods, Cfg, false>(args, params, grads);");
    if (k.has_entry(EntryRole::grads))
      pass(EntryRole::grads, "Cfg::kThreads",
           "flexjit::attention_bwd_sm80<fj_generated::Mods, Cfg, true>(args, params, grads);");
    pass(EntryRole::post, "flexjit::sm80::kBwdPassThreads", "flexjit::bwd_post<fj_generated::Mods, Cfg>(args);");
    if (k.has_entry(EntryRole::tile_map))
      emit_tile_map_entry(k, "flexjit::build_q_tile_map", plan.tile_map.needed,
                          {"The transposed tile map: per kv tile, the query tiles that reach it, classified "
                           "(common/tile_map.cuh)."},
                          w);
    k.source = w.str();
    return k;
  }

};

}  // namespace

const KernelFamily& family() { return single_instance<Sm80Backward>(); }

}  // namespace flexjit::codegen::sm80_bwd

#include "codegen/sm80_bwd/family.hpp"

#include <fmt/format.h>

#include <optional>

#include "codegen/backward_source.hpp"
#include "codegen/mma_sync_target.hpp"
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
    return generate_backward(
        plan, {.family = name(),
               .tile = {.block_m = tile.block_m,
                        .block_n = tile.block_n,
                        .warps = tile.warps,
                        .stages = tile.stages,
                        .q_in_registers = false,
                        .min_blocks_per_sm = 1},
               .threads = tile.warps * 32,
               .shared_bytes = flexjit::sm80::bwd_smem_bytes(t.head_dim, tile.block_m, tile.block_n, tile.stages),
               .templates = {"sm80/attention_bwd.cuh"},
               .tensor_maps = false,
               .description = fmt::format("{} keys per CTA ({} warps of 16) against query tiles of {} rows, {} "
                                          "stages, dQ by fp32 atomics",
                                          tile.block_n, tile.warps, tile.block_m, tile.stages),
               .config = fmt::format("flexjit::BwdConfig<{}, {}, {}, {}, {}, {}>", t.head_dim, tile.block_m,
                                     tile.block_n, tile.warps, tile.stages, compiler::element_cuda_type(t.dtype)),
               .kernel = "flexjit::attention_bwd_sm80",
               .tile_if_spills = tile_if_spills(t, tile)});
  }

};

}  // namespace

const KernelFamily& family() { return single_instance<Sm80Backward>(); }

}  // namespace flexjit::codegen::sm80_bwd

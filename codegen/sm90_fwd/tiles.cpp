#include "codegen/sm90_fwd/tiles.hpp"

#include <fmt/format.h>

#include "compiler/plan.hpp"
#include "templates/sm90/tiles.cuh"

namespace flexjit::codegen::sm90_fwd {
namespace {

constexpr int kMaxSharedBytes = sm90::kSmemPerCtaBytes;  // per CTA on sm_90

// A warpgroup per 64 query rows, plus the producer warpgroup.
int warps_for(int block_m) { return 4 * (block_m / 64 + 1); }

bool fp8(const compiler::KernelTarget& target) { return target.dtype == compiler::ElementType::FP8_E4M3; }

int smem_bytes(const compiler::KernelTarget& target, int block_m, int block_n, int stages) {
  return sm90::fwd_smem_bytes(target.head_dim, block_m, block_n, stages, target.dv(),
                              compiler::element_bytes(target.dtype));
}

int ctas_per_sm(const compiler::KernelTarget& target, int block_m, int block_n, int stages) {
  return sm90::fwd_ctas_per_sm(block_m / 64, smem_bytes(target, block_m, block_n, stages));
}

}  // namespace

std::optional<compiler::TileRequest> tile_if_spills(const compiler::KernelTarget& target, const TileConfig& chosen) {
  // FP8: 128 keys (a 128-byte swizzle row of v transposed), then 64 (a 64-byte one): the S tile,
  // its probabilities and O of 256 columns outgrow the registers under masks that read tensors.
  if (fp8(target)) {
    if (chosen.block_n != 128) return std::nullopt;
    const int stages = smem_bytes(target, chosen.block_m, 64, 4) <= kMaxSharedBytes ? 4 : 2;
    return compiler::TileRequest{.block_m = chosen.block_m, .block_n = 64, .warps = chosen.warps, .stages = stages};
  }
  // The persistent loop's state first: the same tile with one CTA per query tile.
  if (chosen.persistent)
    return compiler::TileRequest{
        .block_m = chosen.block_m, .block_n = chosen.block_n, .warps = chosen.warps, .stages = chosen.stages};
  if (chosen.block_m > 128)
    return compiler::TileRequest{
        .block_m = 128, .block_n = chosen.block_n, .warps = warps_for(128), .stages = chosen.stages};
  if (chosen.block_n > 64) {
    // Half the S tile (and P): 32 + 16 fewer registers a thread; a deeper ring where it fits.
    const int stages = smem_bytes(target, chosen.block_m, 64, 4) <= kMaxSharedBytes ? 4 : 2;
    return compiler::TileRequest{.block_m = chosen.block_m, .block_n = 64, .warps = chosen.warps, .stages = stages};
  }
  return std::nullopt;
}

int shared_bytes(const TileConfig& t, const compiler::KernelTarget& target) {
  return smem_bytes(target, t.block_m, t.block_n, t.stages);
}

std::string tile_refusal(const compiler::KernelTarget& target) {
  if (!target.tile) return "";
  const compiler::TileRequest& r = *target.tile;
  if (r.block_m != 64 && r.block_m != 128 && r.block_m != 192)
    return fmt::format("block_m {} is not 64, 128 or 192 (64 rows per consumer warpgroup)", r.block_m);
  if (r.block_n != 64 && r.block_n != 128 && r.block_n != 256) return fmt::format("block_n {} is not 64, 128 or 256", r.block_n);
  if (r.warps != warps_for(r.block_m))
    return fmt::format("{} warps: a {}-row tile runs with {} (a producer warpgroup and one per 64 rows)", r.warps,
                       r.block_m, warps_for(r.block_m));
  if (r.stages < 2 || r.stages > 8) return fmt::format("{} stages: must be 2 to 8", r.stages);
  if (r.q_in_registers) return "Q always stays in shared memory (the wgmma A operand)";
  if (fp8(target) && r.block_n != 128 && r.block_n != 64)
    return fmt::format("block_n {}: fp8_e4m3 keys come in tiles of 128 or 64", r.block_n);
  if (fp8(target) && r.persistent) return "fp8_e4m3 kernels run one CTA per query tile (no persistent grid)";
  const int smem = smem_bytes(target, r.block_m, r.block_n, r.stages);
  if (smem > kMaxSharedBytes)
    return fmt::format("needs {} bytes of shared memory at head dim {}, more than {}", smem, target.head_dim,
                       kMaxSharedBytes);
  return "";
}

TileConfig choose_tile(const compiler::KernelTarget& target, const ir::Program& program) {
  if (target.tile) {
    const compiler::TileRequest& r = *target.tile;
    return {.block_m = r.block_m,
            .block_n = r.block_n,
            .warps = r.warps,
            .stages = r.stages,
            .q_in_registers = false,
            .min_blocks_per_sm = ctas_per_sm(target, r.block_m, r.block_n, r.stages),
            .persistent = r.persistent};
  }
  const sm90::FwdTile d = fp8(target)            ? sm90::default_fp8_fwd_tile(target.head_dim)
                          : program.block_indices ? sm90::fwd_tile_for_blocks(target.head_dim, target.dv(),
                                                                             program.block_indices->q_block)
                                                  : sm90::default_fwd_tile(target.head_dim, target.dv());
  // A mask that reads tensors follows a tile map, whose row each query tile reads from global
  // memory before its first product: a persistent CTA cannot load that ahead, and it measured
  // no faster (documents +2% at T = 4096, -5% at 32k: bench/NOTES.md). The chunk pass follows no
  // map; persistent, it measured no faster on decode_causal's captured offsets (bench/NOTES.md).
  const bool persistent = d.persistent && !compiler::tile_map_needs(program).needed;
  return {.block_m = d.block_m,
          .block_n = d.block_n,
          .warps = warps_for(d.block_m),
          .stages = d.stages,
          .q_in_registers = false,
          .min_blocks_per_sm = ctas_per_sm(target, d.block_m, d.block_n, d.stages),
          .persistent = persistent};
}

}  // namespace flexjit::codegen::sm90_fwd

#include "codegen/sm80_fwd/tiles.hpp"

#include "flexjit/error.hpp"
#include "templates/sm80/tiles.cuh"

#include <fmt/format.h>

#include <algorithm>


namespace flexjit::codegen::sm80_fwd {

int shared_bytes(const TileConfig& t, int head_dim) {
  return sm80::fwd_smem_bytes(head_dim, t.block_m, t.block_n, t.stages, t.q_in_registers);
}

namespace {

constexpr int kMaxSharedBytes = 227 * 1024;  // per CTA on sm_90 (sm_80: 163 KB, checked at launch)

TileConfig requested_tile(const compiler::KernelTarget& spec, const compiler::TileRequest& r) {
  const std::string what = fmt::format("tile {}x{} with {} warps and {} stages{}", r.block_m, r.block_n, r.warps, r.stages,
                                       r.q_in_registers ? ", Q in registers" : "");
  auto fail = [&](const std::string& why) { throw UnsupportedError(what + ": " + why); };
  if (r.warps != 1 && r.warps != 2 && r.warps != 4 && r.warps != 8) fail("warps must be 1, 2, 4 or 8");
  if (r.block_m < 16 * r.warps || r.block_m > 256 || r.block_m % (16 * r.warps) != 0)
    fail(fmt::format("block_m must be a multiple of 16 * warps = {} in [{}, 256] (each warp owns whole m16 tiles)",
                     16 * r.warps, 16 * r.warps));
  if (r.block_n < 16 || r.block_n > 256 || r.block_n % 16 != 0) fail("block_n must be a multiple of 16 in [16, 256]");
  if (r.stages < 2 || r.stages > 4) fail("stages must be 2, 3 or 4");
  if (r.persistent) fail("the persistent grid is the sm90_fwd family's (TMA + wgmma)");
  TileConfig t{.block_m = r.block_m,
               .block_n = r.block_n,
               .warps = r.warps,
               .stages = r.stages,
               .q_in_registers = r.q_in_registers,
               .min_blocks_per_sm = 1};
  const int smem = shared_bytes(t, spec.head_dim);
  if (smem > kMaxSharedBytes)
    fail(fmt::format("needs {} bytes of shared memory at head dim {}, more than {}", smem, spec.head_dim, kMaxSharedBytes));
  // Two CTAs per SM when their shared memory fits and 4 warps or fewer leave <= 255 registers each.
  t.min_blocks_per_sm = r.warps <= 4 && 2 * smem <= kMaxSharedBytes ? 2 : 1;
  return t;
}

}  // namespace

TileConfig choose_tile(const compiler::KernelTarget& spec) {
  if (spec.tile) return requested_tile(spec, *spec.tile);
  const sm80::FwdTile d = sm80::default_fwd_tile(spec.head_dim);
  return {.block_m = d.block_m,
          .block_n = d.block_n,
          .warps = d.warps,
          .stages = d.stages,
          .q_in_registers = d.q_in_registers,
          .min_blocks_per_sm = d.min_blocks_per_sm};
}

TileConfig choose_block_sparse_tile(const compiler::KernelTarget& spec, int q_block, int kv_block) {
  TileConfig t = choose_tile(spec);
  if (q_block <= 0 || q_block % 16 != 0 || kv_block <= 0 || kv_block % 16 != 0)
    throw UnsupportedError(fmt::format("BlockIndices[{}, {}]: the block sizes must be positive multiples of 16 "
                                            "(whole m16/k16 tensor-core tiles)", q_block, kv_block));
  // Fewer rows per CTA: keep each warp at 16 * MT rows, dropping to one m16 tile per warp and then
  // to fewer warps (BM = 64: 4 warps x 16 rows; 32: 2 x 16; 16: 1 x 16).
  while (q_block % t.block_m != 0) {
    t.block_m /= 2;
    t.warps = std::min(t.warps, std::max(1, t.block_m / 16));
  }
  while (kv_block % t.block_n != 0) t.block_n /= 2;
  if (t.block_m < 16 || t.block_n < 16 || t.block_m % (16 * t.warps) != 0)
    throw UnsupportedError(fmt::format("BlockIndices[{}, {}]: no kernel tile fits these block sizes", q_block,
                                            kv_block));
  return t;
}

}  // namespace flexjit::codegen::sm80_fwd

#include "codegen/sm80_fwd/tiles.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "flexjit/error.hpp"

namespace flexjit::codegen {

const char* element_name(ElementType t) { return t == ElementType::BF16 ? "bf16" : "fp16"; }
const char* element_cuda_type(ElementType t) { return t == ElementType::BF16 ? "flexjit::bf16_t" : "flexjit::fp16_t"; }

int TileConfig::shared_bytes(int head_dim) const {
  // Mirrors FwdConfig::kSmemBytes in templates/attention_fwd_sm80.cuh: a K and a V ring of
  // `stages` tiles, plus a Q tile unless Q is staged in the ring; rows padded by 8 elements.
  const int stride = head_dim + 8;
  const bool q_aliased = q_in_registers && block_m <= 2 * block_n;
  return (2 * stages * block_n + (q_aliased ? 0 : block_m)) * stride * 2;
}

void validate(const KernelSpec& spec) {
  if (spec.head_dim < 16 || spec.head_dim > 256 || spec.head_dim % 16 != 0)
    throw UnsupportedError(
        fmt::format("head dim {} is not supported: it must be a multiple of 16 between 16 and 256", spec.head_dim));
  if (spec.arch.rfind("sm_", 0) != 0)
    throw UnsupportedError(fmt::format("architecture '{}' is not of the form sm_XY (e.g. sm_80, sm_90a)", spec.arch));
  int number = 0;
  try {
    number = std::stoi(spec.arch.substr(3));
  } catch (...) {
    throw UnsupportedError(fmt::format("architecture '{}' is not of the form sm_XY (e.g. sm_80, sm_90a)", spec.arch));
  }
  if (number < 80)
    throw UnsupportedError(fmt::format("architecture '{}' is not supported: flexjit kernels need sm_80 or newer "
                                       "(cp.async, bf16 tensor cores)", spec.arch));
}

namespace {

constexpr int kMaxSharedBytes = 227 * 1024;  // per CTA on sm_90 (sm_80: 163 KB, checked at launch)

TileConfig requested_tile(const KernelSpec& spec, const TileRequest& r) {
  const std::string what = fmt::format("tile {}x{} with {} warps and {} stages{}", r.block_m, r.block_n, r.warps, r.stages,
                                       r.q_in_registers ? ", Q in registers" : "");
  auto fail = [&](const std::string& why) { throw UnsupportedError(what + ": " + why); };
  if (r.warps != 1 && r.warps != 2 && r.warps != 4 && r.warps != 8) fail("warps must be 1, 2, 4 or 8");
  if (r.block_m < 16 * r.warps || r.block_m > 256 || r.block_m % (16 * r.warps) != 0)
    fail(fmt::format("block_m must be a multiple of 16 * warps = {} in [{}, 256] (each warp owns whole m16 tiles)",
                     16 * r.warps, 16 * r.warps));
  if (r.block_n < 16 || r.block_n > 256 || r.block_n % 16 != 0) fail("block_n must be a multiple of 16 in [16, 256]");
  if (r.stages < 2 || r.stages > 4) fail("stages must be 2, 3 or 4");
  TileConfig t{r.block_m, r.block_n, r.warps, r.stages, r.q_in_registers, 1};
  const int smem = t.shared_bytes(spec.head_dim);
  if (smem > kMaxSharedBytes)
    fail(fmt::format("needs {} bytes of shared memory at head dim {}, more than {}", smem, spec.head_dim, kMaxSharedBytes));
  // Two CTAs per SM when their shared memory fits and 4 warps or fewer leave <= 255 registers each.
  t.min_blocks_per_sm = r.warps <= 4 && 2 * smem <= kMaxSharedBytes ? 2 : 1;
  return t;
}

}  // namespace

TileConfig choose_tile_config(const KernelSpec& spec) {
  validate(spec);
  if (spec.tile) return requested_tile(spec, *spec.tile);
  // Per head-dim bucket, measured on an H200 (tests/templates/README.md and bench/NOTES.md have
  // the sweeps), the same for bf16 and fp16 and for sm_80..sm_90a until the Hopper family lands.
  // Every warp owns 32 query rows so each K/V fragment feeds two mma's; Q is re-read from shared
  // memory so that two CTAs fit per SM without spills; at D = 256 a warp owns 16 rows (128 O
  // accumulators).
  // D <= 64: a 3-deep K/V ring (bench/NOTES.md: causal D = 64 278 -> 286 TF/s). Keeping Q in
  // registers gains another 1% on causal but makes 11 of the 23 example and test masks spill
  // (ptxas, sm_90a), so Q stays in shared memory.
  if (spec.head_dim <= 64) return {128, 64, 4, 3, false, 2};
  if (spec.head_dim <= 128) return {128, 32, 4, 2, false, 2};
  return {64, 32, 4, 2, false, 2};
}

TileConfig choose_block_sparse_tile_config(const KernelSpec& spec, int q_block, int kv_block) {
  TileConfig t = choose_tile_config(spec);
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

}  // namespace flexjit::codegen

#include "codegen/sm90_bwd/family.hpp"

#include <fmt/format.h>

#include "codegen/backward_source.hpp"
#include "dsl/quoted.hpp"
#include "templates/sm90/tiles.cuh"

namespace flexjit::codegen::sm90_bwd {
namespace {

constexpr int kBlockM = 64;   // queries per tile: one swizzle row of dS^T
constexpr int kBlockN = 128;  // keys per CTA: two consumer warpgroups of 64
constexpr int kStages = 2;    // query tiles in flight
constexpr int kThreads = (kBlockN / 64 + 1) * 128;

class Sm90Backward final : public KernelFamily {
 public:
  Sm90Backward() : KernelFamily("sm90_bwd", compiler::KernelPass::Backward) {}

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    if (t.arch != "sm_90a") return fmt::format("architecture {} is not sm_90a (wgmma, TMA)", dsl::quoted(t.arch));
    if (t.head_dim != 64 && t.head_dim != 128) return fmt::format("head dim {} is not 64 or 128", t.head_dim);
    if (t.tile) return "its tile is fixed (64 queries x 128 keys)";
    if (program.block_indices) {
      const int qb = program.block_indices->q_block, kb = program.block_indices->kv_block;
      if (qb % kBlockM != 0 || kb % kBlockN != 0)
        return fmt::format("BlockIndices[{}, {}]: the blocks must be whole {}x{} tiles", qb, kb, kBlockM, kBlockN);
    }
    return "";
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& t = plan.target;
    return generate_backward(
        plan, {.family = name(),
               .tile = {.block_m = kBlockM,
                        .block_n = kBlockN,
                        .warps = kThreads / 32,
                        .stages = kStages,
                        .q_in_registers = false,
                        .min_blocks_per_sm = 1},
               .threads = kThreads,
               .shared_bytes = flexjit::sm90::bwd_smem_bytes(t.head_dim, kBlockM, kBlockN, kStages),
               .templates = {"sm80/attention_bwd.cuh", "sm90/attention_bwd.cuh"},
               .tensor_maps = true,
               .description = fmt::format("{} keys per CTA (2 wgmma warpgroups of 64, TMA producer) against query "
                                          "tiles of {} rows, {} stages, dQ added by bulk reduce-add",
                                          kBlockN, kBlockM, kStages),
               .config = fmt::format("flexjit::Sm90BwdConfig<{}, {}, {}, {}, {}>", t.head_dim, kBlockM, kBlockN,
                                     kStages, compiler::element_cuda_type(t.dtype)),
               .kernel = "flexjit::attention_bwd_sm90",
               .tile_if_spills = std::nullopt});
  }
};

}  // namespace

const KernelFamily& family() { return single_instance<Sm90Backward>(); }

}  // namespace flexjit::codegen::sm90_bwd

#include "codegen/sm90_fwd/family.hpp"

#include <fmt/format.h>

#include "codegen/forward_source.hpp"
#include "dsl/quoted.hpp"
#include "codegen/sm90_fwd/tiles.hpp"
#include "templates/sm90/tiles.cuh"

namespace flexjit::codegen::sm90_fwd {
namespace {

class Sm90Forward final : public KernelFamily {
 public:
  Sm90Forward() : KernelFamily("sm90_fwd", compiler::KernelPass::Forward) {}

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    if (t.arch != "sm_90a") return fmt::format("architecture {} is not sm_90a (wgmma, TMA)", dsl::quoted(t.arch));
    if (!sm90::serves_head_dim(t.head_dim)) return fmt::format("head dim {} is not 64, 128 or 256", t.head_dim);
    std::string tile = tile_refusal(t);
    if (!tile.empty()) return tile;
    if (program.block_indices) {
      const TileConfig tile_config = choose_tile(t, program);
      const int qb = program.block_indices->q_block, kb = program.block_indices->kv_block;
      if (qb <= 0 || kb <= 0 || qb % tile_config.block_m != 0 || kb % tile_config.block_n != 0)
        return fmt::format("BlockIndices[{}, {}]: the blocks must be whole {}x{} tiles", qb, kb, tile_config.block_m,
                           tile_config.block_n);
    }
    return "";
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& target = plan.target;
    const TileConfig t = choose_tile(target, *plan.program);
    GeneratedKernel kernel = generate_forward(
        plan, {.family = name(),
               .tile = t,
               .shared_bytes = shared_bytes(t, target.head_dim),
               .templates = "sm90/attention_fwd.cuh",
               .tensor_maps = true,
               .description = fmt::format("TMA + wgmma, warp-specialized; tile {}x{}, {} stages, {} consumer "
                                          "warpgroups{}", t.block_m, t.block_n, t.stages, t.block_m / 64,
                                          t.persistent ? "; persistent grid" : ""),
               .config = fmt::format("flexjit::Sm90FwdConfig<{}, {}, {}, {}, {}, {}>", target.head_dim, t.block_m,
                                     t.block_n, t.stages, compiler::element_cuda_type(target.dtype),
                                     t.persistent ? "true" : "false"),
               .min_blocks = "Cfg::kMinBlocksPerSM",
               .kernel = "flexjit::attention_fwd_sm90"});
    kernel.tile_if_spills = tile_if_spills(target, t);
    return kernel;
  }
};

}  // namespace

const KernelFamily& family() { return single_instance<Sm90Forward>(); }

}  // namespace flexjit::codegen::sm90_fwd

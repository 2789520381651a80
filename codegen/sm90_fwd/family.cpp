#include "codegen/sm90_fwd/family.hpp"

#include <fmt/format.h>

#include "codegen/forward_source.hpp"
#include "dsl/quoted.hpp"
#include "codegen/sm90_fwd/tiles.hpp"
#include "templates/sm90/tiles.cuh"

namespace flexjit::codegen::sm90_fwd {
namespace {

// The forward, or (chunk) the same kernel reading a KV cache for a chunk of new tokens (whose
// compile follows the same tile chain, then falls back to sm80_chunk: api/pass_kernels.cpp).
class Sm90Forward : public KernelFamily {
 public:
  Sm90Forward() : Sm90Forward("sm90_fwd", compiler::KernelPass::Forward) {}

  bool serves_value_head_dim() const override { return true; }
  bool serves_fp8() const override { return pass() == compiler::KernelPass::Forward; }

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    if (t.arch != "sm_90a") return fmt::format("architecture {} is not sm_90a (wgmma, TMA)", dsl::quoted(t.arch));
    if (t.dtype == compiler::ElementType::FP8_E4M3 && !sm90::serves_fp8_head_dims(t.head_dim, t.dv()))
      return fmt::format("fp8_e4m3 head dims: 128 or 256, one for q, k and v (got {}{})", t.head_dim,
                         t.dv() != t.head_dim ? fmt::format(" and {}", t.dv()) : "");
    if (!sm90::serves_head_dims(t.head_dim, t.dv()))
      return t.dv() == t.head_dim
                 ? fmt::format("head dim {} is not 64, 128 or 256", t.head_dim)
                 : fmt::format("head dims {} (q, k) and {} (v): the value head dim differs only as 192 and 128",
                               t.head_dim, t.dv());
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
    const bool chunk = pass() == compiler::KernelPass::Chunk;
    const bool fp8 = target.dtype == compiler::ElementType::FP8_E4M3;
    const TileConfig t = choose_tile(target, *plan.program);
    GeneratedKernel kernel = generate_forward(
        plan, {.family = name(),
               .tile = t,
               .shared_bytes = shared_bytes(t, target),
               .templates = "sm90/attention_fwd.cuh",
               .tensor_maps = true,
               .description = fmt::format("TMA + wgmma, warp-specialized; tile {}x{}, {} stages, {} consumer "
                                          "warpgroups{}", t.block_m, t.block_n, t.stages, t.block_m / 64,
                                          t.persistent ? "; persistent grid" : ""),
               .config = fmt::format("flexjit::Sm90FwdConfig<{}, {}, {}, {}, {}, {}{}>", target.head_dim, t.block_m,
                                     t.block_n, t.stages, compiler::element_cuda_type(target.dtype),
                                     t.persistent ? "true" : "false",
                                     target.dv() != target.head_dim ? fmt::format(", {}", target.dv()) : ""),
               .min_blocks = "Cfg::kMinBlocksPerSM",
               .kernel = chunk ? "flexjit::attention_chunk_sm90" : "flexjit::attention_fwd_sm90",
               .chunk = chunk,
               .prep_kernel = fp8 ? "flexjit::transpose_v_e4m3" : "",
               .prep_threads = fp8 ? sm90::kFp8TransposeThreads : 0});
    kernel.tile_if_spills = tile_if_spills(target, t);
    return kernel;
  }

 protected:
  Sm90Forward(const char* name, compiler::KernelPass pass) : KernelFamily(name, pass) {}
};

class Sm90Chunk final : public Sm90Forward {
 public:
  Sm90Chunk() : Sm90Forward("sm90_chunk", compiler::KernelPass::Chunk) {}
};

}  // namespace

const KernelFamily& family() { return single_instance<Sm90Forward>(); }
const KernelFamily& chunk_family() { return single_instance<Sm90Chunk>(); }

}  // namespace flexjit::codegen::sm90_fwd

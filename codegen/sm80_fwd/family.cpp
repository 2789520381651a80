#include "codegen/sm80_fwd/family.hpp"

#include <fmt/format.h>

#include "codegen/mma_sync_target.hpp"
#include "codegen/forward_source.hpp"
#include "codegen/sm80_fwd/tiles.hpp"

namespace flexjit::codegen::sm80_fwd {
namespace {

// The forward, or (chunk) the same kernel reading a KV cache for a chunk of new tokens.
class Sm80Forward : public MmaSyncFamily {
 public:
  Sm80Forward() : Sm80Forward("sm80_fwd", compiler::KernelPass::Forward) {}

  // v and out of Dv <= D columns: V's tiles take Dv columns of K's rows in shared memory.
  bool serves_value_head_dim() const override { return true; }
  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    const int dv = t.dv();
    if (dv != t.head_dim && (dv < 16 || dv > t.head_dim || dv % 16 != 0))
      return fmt::format("v's head dim {} is not a multiple of 16 between 16 and q and k's {}", dv, t.head_dim);
    return MmaSyncFamily::refusal(t, program);
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& target = plan.target;
    const ir::Program& program = *plan.program;
    const TileConfig t = program.block_indices ? choose_block_sparse_tile(target, program.block_indices->q_block,
                                                                          program.block_indices->kv_block)
                                               : choose_tile(target);
    const bool chunk = pass() == compiler::KernelPass::Chunk;
    return generate_forward(
        plan, {.family = name(),
               .tile = t,
               .shared_bytes = shared_bytes(t, target.head_dim),
               .templates = "sm80/attention_fwd.cuh",
               .description = fmt::format("tile {}x{}, {} warps, {} stages, Q {}", t.block_m, t.block_n, t.warps,
                                          t.stages, t.q_in_registers ? "in registers" : "re-read from shared memory"),
               .config = fmt::format("flexjit::FwdConfig<{}, {}, {}, {}, {}, {}, {}, {}{}>", target.head_dim, t.block_m,
                                     t.block_n, t.warps, t.stages, compiler::element_cuda_type(target.dtype),
                                     t.q_in_registers ? "true" : "false", t.min_blocks_per_sm,
                                     target.dv() != target.head_dim ? fmt::format(", {}", target.dv()) : ""),
               .min_blocks = "Cfg::kMinBlocksPerSM",
               .kernel = chunk ? "flexjit::attention_chunk_sm80" : "flexjit::attention_fwd_sm80",
               .chunk = chunk});
  }

 protected:
  Sm80Forward(const char* name, compiler::KernelPass pass) : MmaSyncFamily(name, pass) {}
};

class Sm80Chunk final : public Sm80Forward {
 public:
  Sm80Chunk() : Sm80Forward("sm80_chunk", compiler::KernelPass::Chunk) {}
};

}  // namespace

const KernelFamily& family() { return single_instance<Sm80Forward>(); }
const KernelFamily& chunk_family() { return single_instance<Sm80Chunk>(); }

}  // namespace flexjit::codegen::sm80_fwd

#include "codegen/sm90_bwd/family.hpp"

#include <fmt/format.h>

#include "codegen/backward_source.hpp"
#include "dsl/quoted.hpp"
#include "templates/sm90/tiles.cuh"

namespace flexjit::codegen::sm90_bwd {
namespace {

// The two forms of the family's main kernel: the narrow one (each consumer warpgroup keeps dK and
// dV of its own 64 keys over the whole head dim) and, where those do not fit its registers, the
// wide one (templates/sm90/attention_bwd_wide.cuh: both warpgroups share 64 keys and split the
// head dim). A producer warpgroup and two consumers either way.
struct Form {
  int block_m;  // queries per tile: one swizzle row of P^T and dS^T
  int block_n;  // keys per CTA
  int stages;   // query tiles in flight
  const char* config;
  const char* kernel;
  const char* header;
};
constexpr Form kNarrow{64, 128, 2, "flexjit::Sm90BwdConfig", "flexjit::attention_bwd_sm90", "sm90/attention_bwd.cuh"};
constexpr Form kWide{64, 64, 2, "flexjit::Sm90BwdWideConfig", "flexjit::attention_bwd_sm90_wide",
                     "sm90/attention_bwd_wide.cuh"};
constexpr int kThreads = 3 * 128;
constexpr const Form& form_for(int head_dim) { return head_dim <= 128 ? kNarrow : kWide; }

class Sm90Backward final : public KernelFamily {
 public:
  Sm90Backward() : KernelFamily("sm90_bwd", compiler::KernelPass::Backward) {}

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    if (t.arch != "sm_90a") return fmt::format("architecture {} is not sm_90a (wgmma, TMA)", dsl::quoted(t.arch));
    if (t.head_dim != 64 && t.head_dim != 128 && t.head_dim != 256)
      return fmt::format("head dim {} is not 64, 128 or 256", t.head_dim);
    const Form& f = form_for(t.head_dim);
    if (t.tile) return fmt::format("its tile is fixed ({} queries x {} keys)", f.block_m, f.block_n);
    if (program.block_indices) {
      const int qb = program.block_indices->q_block, kb = program.block_indices->kv_block;
      if (qb % f.block_m != 0 || kb % f.block_n != 0)
        return fmt::format("BlockIndices[{}, {}]: the blocks must be whole {}x{} tiles", qb, kb, f.block_m, f.block_n);
    }
    return "";
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& t = plan.target;
    const Form& f = form_for(t.head_dim);
    const bool wide = &f == &kWide;
    return generate_backward(
        plan,
        {.family = name(),
         .tile = {.block_m = f.block_m,
                  .block_n = f.block_n,
                  .warps = kThreads / 32,
                  .stages = f.stages,
                  .q_in_registers = false,
                  .min_blocks_per_sm = 1},
         .threads = kThreads,
         .shared_bytes = wide ? flexjit::sm90::bwd_wide_smem_bytes(t.head_dim, f.block_m, f.block_n, f.stages)
                              : flexjit::sm90::bwd_smem_bytes(t.head_dim, f.block_m, f.block_n, f.stages),
         .templates = {"sm80/attention_bwd.cuh", f.header},
         .tensor_maps = true,
         .description = wide ? fmt::format("{} keys per CTA shared by 2 wgmma warpgroups, each with half the head dim "
                                           "(TMA producer), against query tiles of {} rows, {} stages, dQ added by "
                                           "bulk reduce-add",
                                           f.block_n, f.block_m, f.stages)
                             : fmt::format("{} keys per CTA (2 wgmma warpgroups of 64, TMA producer) against query "
                                           "tiles of {} rows, {} stages, dQ added by bulk reduce-add",
                                           f.block_n, f.block_m, f.stages),
         .config = fmt::format("{}<{}, {}, {}, {}, {}>", f.config, t.head_dim, f.block_m, f.block_n, f.stages,
                               compiler::element_cuda_type(t.dtype)),
         .kernel = f.kernel,
         .tile_if_spills = std::nullopt});
  }
};

}  // namespace

const KernelFamily& family() { return single_instance<Sm90Backward>(); }

}  // namespace flexjit::codegen::sm90_bwd

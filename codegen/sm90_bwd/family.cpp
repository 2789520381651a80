#include "codegen/sm90_bwd/family.hpp"

#include <fmt/format.h>

#include "codegen/backward_source.hpp"
#include "dsl/quoted.hpp"
#include "templates/sm90/tiles.cuh"

namespace flexjit::codegen::sm90_bwd {
namespace {

// The three forms of the family's main kernel: the narrow one (each consumer warpgroup keeps dK and
// dV of its own 64 keys over the whole head dim) and, where those do not fit its registers, the
// wide one (templates/sm90/attention_bwd_wide.cuh: both warpgroups share 64 keys and split the
// head dim) and, for a value head dim of its own, the split one (templates/sm90/
// attention_bwd_split.cuh: both share 64 keys, one keeps dV, the other dK). A producer warpgroup
// and two consumers each way.
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
constexpr Form kSplit{64, 64, 2, "flexjit::Sm90BwdSplitConfig", "flexjit::attention_bwd_sm90_split",
                      "sm90/attention_bwd_split.cuh"};
constexpr int kThreads = 3 * 128;
const Form& form_for(const compiler::KernelTarget& t) {
  return t.dv() != t.head_dim ? kSplit : t.head_dim <= 128 ? kNarrow : kWide;
}

// The narrow form's dQ staging buffers per consumer and its producer warpgroup's registers: the
// deterministic kernel's writer thread takes several buffers, and 32 registers in its wide form
// (templates/sm90/attention_bwd.cuh, Sm90BwdConfig; compiler::OrderedDqForm).
bool writer(const Form& f, const compiler::KernelTarget& t) {
  return &f == &kNarrow && t.ordered_dq && t.ordered_dq_form != compiler::OrderedDqForm::Consumers;
}
int dq_buffers(const Form& f, const compiler::KernelTarget& t) {
  return writer(f, t) ? flexjit::sm90::kBwdOrderedDqBuffers : 1;
}
std::string writer_arguments(const Form& f, const compiler::KernelTarget& t) {
  if (!writer(f, t)) return "";
  if (t.ordered_dq_form != compiler::OrderedDqForm::WriterWideProducer) return fmt::format(", {}", dq_buffers(f, t));
  return fmt::format(", {}, {}", dq_buffers(f, t), flexjit::sm90::kBwdWideProducerRegisters);
}

int shared_bytes(const Form& f, const compiler::KernelTarget& t) {
  if (&f == &kSplit) return flexjit::sm90::bwd_split_smem_bytes(t.head_dim, t.dv(), f.block_m, f.block_n, f.stages);
  if (&f == &kWide) return flexjit::sm90::bwd_wide_smem_bytes(t.head_dim, f.block_m, f.block_n, f.stages);
  return flexjit::sm90::bwd_smem_bytes(t.head_dim, f.block_m, f.block_n, f.stages, dq_buffers(f, t));
}

std::string description(const Form& f) {
  if (&f == &kNarrow)
    return fmt::format("{} keys per CTA (2 wgmma warpgroups of 64, TMA producer) against query tiles of {} rows, {} "
                       "stages, dQ added by bulk reduce-add",
                       f.block_n, f.block_m, f.stages);
  return fmt::format("{} keys per CTA shared by 2 wgmma warpgroups, {} (TMA producer), against query tiles of {} rows, "
                     "{} stages, dQ added by bulk reduce-add",
                     f.block_n, &f == &kWide ? "each with half the head dim" : "one keeping dV, the other dK",
                     f.block_m, f.stages);
}

class Sm90Backward final : public KernelFamily {
 public:
  Sm90Backward() : KernelFamily("sm90_bwd", compiler::KernelPass::Backward) {}

  bool serves_value_head_dim() const override { return true; }

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    if (t.arch != "sm_90a") return fmt::format("architecture {} is not sm_90a (wgmma, TMA)", dsl::quoted(t.arch));
    // The forward's head dims (templates/sm90/tiles.cuh): its lse and out are what the backward reads.
    if (!flexjit::sm90::serves_head_dims(t.head_dim, t.dv()))
      return t.dv() == t.head_dim
                 ? fmt::format("head dim {} is not 64, 128 or 256", t.head_dim)
                 : fmt::format("head dims {} (q, k) and {} (v): the value head dim differs only as 192 and 128",
                               t.head_dim, t.dv());
    const Form& f = form_for(t);
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
    const Form& f = form_for(t);
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
         .shared_bytes = shared_bytes(f, t),
         .templates = {"sm80/attention_bwd.cuh", f.header},
         .tensor_maps = true,
         .description = description(f),
         // The split form's config names both head dims.
         .config = fmt::format("{}<{}{}, {}, {}, {}, {}{}>", f.config, t.head_dim,
                               &f == &kSplit ? fmt::format(", {}", t.dv()) : "", f.block_m, f.block_n, f.stages,
                               compiler::element_cuda_type(t.dtype), writer_arguments(f, t)),
         .kernel = f.kernel,
         .tile_if_spills = std::nullopt});
  }
};

}  // namespace

const KernelFamily& family() { return single_instance<Sm90Backward>(); }

}  // namespace flexjit::codegen::sm90_bwd

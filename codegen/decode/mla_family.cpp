#include <fmt/format.h>

#include "codegen/cuda_writer.hpp"
#include "codegen/decode/entries.hpp"
#include "codegen/decode/family.hpp"
#include "codegen/entry_writer.hpp"
#include "codegen/forward_source.hpp"
#include "codegen/mods.hpp"
#include "templates/decode/mla_tiles.cuh"
#include "templates/decode/tiles.cuh"

namespace flexjit::codegen::decode {
namespace {

namespace mla = flexjit::decode_mla;

// The shared memory a program's token lists take beside the tile (their sorted keys), or 0.
int list_bytes(const ir::Program& program) {
  return program.token_indices ? flexjit::decode::decode_token_list_bytes() : 0;
}

// Decode where v and out have a head dim of their own (MLA): templates/decode/attention_decode_mla.cuh.
class DecodeMla final : public KernelFamily {
 public:
  DecodeMla() : KernelFamily("decode_mla", compiler::KernelPass::Decode) {}

  bool serves_value_head_dim() const override { return true; }
  bool serves_token_lists() const override { return true; }

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    const int d = t.head_dim, dv = t.dv();
    if (dv == d) return "it serves a head dim of v other than q and k's (the decode family serves one head dim)";
    if (d % 16 != 0 || d > mla::kMaxHeadDim)
      return fmt::format("head dim {} of q and k is not supported: it must be a multiple of 16 up to {}", d,
                         mla::kMaxHeadDim);
    if (dv % (16 * mla::kWarps) != 0 || dv > mla::kMaxHeadDimV)
      return fmt::format("head dim {} of v is not supported: it must be a multiple of {} up to {}", dv,
                         16 * mla::kWarps, mla::kMaxHeadDimV);
    const std::optional<int> arch = compiler::arch_number(t.arch);
    if (!arch || *arch < 80)
      return fmt::format("architecture {} is not supported: it needs sm_80 or newer", t.arch);
    if (program.block_indices) return "block lists run on the decode family's kernel only";
    const int list = list_bytes(program);
    if (mla::choose_tile(d, dv, *arch, list).stages == 0)
      return fmt::format("{} bytes of shared memory per CTA (q and two chunks of {} keys{}) are more than {} has ({})",
                         mla::smem_bytes(d, dv, 2, false, list), mla::kBlockN,
                         list > 0 ? fmt::format(", and a token list of up to {} keys", flexjit::decode::max_token_list())
                                  : "",
                         t.arch, mla::max_smem_bytes(*arch));
    return "";
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& t = plan.target;
    const int list = list_bytes(*plan.program);
    const mla::MlaTile tile = mla::choose_tile(t.head_dim, t.dv(), *compiler::arch_number(t.arch), list);
    GeneratedKernel k;
    k.family = name();
    k.target = t;
    k.tile = {.block_m = mla::kRows,
              .block_n = mla::kBlockN,
              .warps = mla::kWarps,
              .stages = tile.stages,
              .q_in_registers = false,
              .min_blocks_per_sm = 1};
    k.params = plan.params;
    k.kv_range_is_full = plan.kv_range_full;
    const std::string entry = fmt::format("flexjit_decode_mla_{}_d{}v{}_{}", plan.name, t.head_dim, t.dv(),
                                          compiler::element_name(t.dtype));
    k.entries = {{EntryRole::main, entry, k.tile.threads(),
                  mla::smem_bytes(t.head_dim, t.dv(), tile.stages, tile.separate_v, list)},
                 {EntryRole::combine, entry + "_combine", flexjit::decode::kCombineThreads, 0}};
    k.headers = {"common/attention_common.cuh", "decode/attention_decode_mla.cuh", "common/dsl_ops.cuh",
                 "common/interval.cuh"};
    if (list > 0) k.headers.push_back("decode/token_list.cuh");
    if (plan.tile_map.needed) k.headers.push_back("common/tile_map.cuh");

    CudaWriter w(plan.source);
    write_preamble(w, plan, "Decode with a value head dim of its own (multi-head latent attention)", k.family,
                   fmt::format("up to {} (query head, token) rows per CTA sharing chunks of {} keys over {} warps, {} "
                               "stages{}, split-KV with an LSE merge",
                               mla::kRows, mla::kBlockN, mla::kWarps, tile.stages,
                               tile.separate_v ? "" : ", v read from k's rows"),
                   k.headers);
    emit_mods(plan, w);
    write_config(w,
                 fmt::format("flexjit::DecodeMlaConfig<{}, {}, {}, {}, {}{}>", t.head_dim, t.dv(), tile.stages,
                             tile.separate_v ? "true" : "false", compiler::element_cuda_type(t.dtype),
                             list > 0 ? ", true" : ""),
                 k.main_entry());
    write_decode_entries(w, k, "attention_decode_mla");
    k.source = w.str();
    return k;
  }
};

}  // namespace

const KernelFamily& mla_family() { return single_instance<DecodeMla>(); }

}  // namespace flexjit::codegen::decode

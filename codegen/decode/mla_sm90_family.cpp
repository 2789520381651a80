#include <fmt/format.h>

#include "codegen/cuda_writer.hpp"
#include "codegen/decode/entries.hpp"
#include "codegen/decode/family.hpp"
#include "codegen/entry_writer.hpp"
#include "codegen/forward_source.hpp"
#include "codegen/mods.hpp"
#include "dsl/quoted.hpp"
#include "templates/decode/mla_sm90_tiles.cuh"
#include "templates/decode/tiles.cuh"
#include "templates/sm90/tiles.cuh"

namespace flexjit::codegen::decode {
namespace {

namespace mla = flexjit::decode_mla_sm90;

static_assert(mla::kMaxTokenList == flexjit::decode::max_token_list(), "the lists the decode kernels take");
// The Hopper facts its layout repeats (decode/mla_sm90_tiles.cuh includes nothing), held to sm90's.
static_assert(mla::kSwizzleBytes == flexjit::sm90::kSwizzleBytes && mla::kTileAlign == flexjit::sm90::kTileAlign &&
                  mla::kSmemPerCtaBytes == flexjit::sm90::kSmemPerCtaBytes,
              "the 128-byte swizzle, tile alignment and shared memory a CTA may take");

// Multi-head latent attention's absorbed form (q, k of 576, v the first 512 columns of k) on Hopper:
// templates/decode/attention_decode_mla_sm90.cuh.
class DecodeMlaSm90 final : public KernelFamily {
 public:
  DecodeMlaSm90() : KernelFamily("sm90_mla", compiler::KernelPass::Decode) {}

  bool serves_value_head_dim() const override { return true; }
  bool serves_token_lists() const override { return true; }

  std::string refusal(const compiler::KernelTarget& t, const ir::Program& program) const override {
    if (t.head_dim != mla::kHeadDim || t.dv() != mla::kHeadDimV)
      return fmt::format("it serves q and k of {} with v of {} (multi-head latent attention's absorbed form), not {} / {}",
                         mla::kHeadDim, mla::kHeadDimV, t.head_dim, t.dv());
    if (t.arch != "sm_90a") return fmt::format("architecture {} is not sm_90a (wgmma)", dsl::quoted(t.arch));
    if (program.block_indices) return "block lists run on the decode family's kernel only";
    return "";
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& t = plan.target;
    const bool list = plan.program->token_indices.has_value();
    GeneratedKernel k;
    k.family = name();
    k.target = t;
    k.tile = {.block_m = mla::kRows,
              .block_n = mla::kBlockN,
              .warps = mla::kThreads / 32,
              .stages = 2,
              .q_in_registers = false,
              .min_blocks_per_sm = 1};
    k.params = plan.params;
    k.kv_range_is_full = plan.kv_range_full;
    k.split_min_keys = mla::kSplitMinKeys;
    const std::string entry = fmt::format("flexjit_decode_mla_sm90_{}_{}", plan.name, compiler::element_name(t.dtype));
    k.entries = {{EntryRole::main, entry, mla::kThreads, mla::Layout().bytes()},
                 {EntryRole::combine, entry + "_combine", flexjit::decode::kCombineThreads, 0}};
    k.headers = {"common/attention_common.cuh", "decode/attention_decode_mla_sm90.cuh", "common/dsl_ops.cuh",
                 "common/interval.cuh"};
    if (plan.tile_map.needed) k.headers.push_back("common/tile_map.cuh");

    CudaWriter w(plan.source);
    write_preamble(w, plan, "Multi-head latent attention's absorbed decode on Hopper (wgmma)", k.family,
                   fmt::format("up to {} (query head, token) rows per CTA, chunks of {} keys gathered by a producer "
                               "warpgroup, two consumer warpgroups, v read from k's rows, split-KV with an LSE merge",
                               mla::kRows, mla::kBlockN),
                   k.headers);
    emit_mods(plan, w);
    write_config(w,
                 fmt::format("flexjit::DecodeMlaSm90Config<{}{}>", compiler::element_cuda_type(t.dtype),
                             list ? ", true" : ""),
                 k.main_entry());
    write_decode_entries(w, k, "attention_decode_mla_sm90");
    k.source = w.str();
    return k;
  }
};

}  // namespace

const KernelFamily& mla_sm90_family() { return single_instance<DecodeMlaSm90>(); }

}  // namespace flexjit::codegen::decode

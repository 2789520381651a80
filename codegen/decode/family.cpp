#include "codegen/decode/family.hpp"

#include <fmt/format.h>

#include "codegen/mma_sync_target.hpp"
#include "codegen/cuda_writer.hpp"
#include "codegen/decode/entries.hpp"
#include "codegen/entry_writer.hpp"
#include "codegen/forward_source.hpp"
#include "codegen/mods.hpp"
#include "templates/decode/tiles.cuh"

namespace flexjit::codegen::decode {
namespace {

class Decode final : public MmaSyncFamily {
 public:
  Decode() : MmaSyncFamily("decode", compiler::KernelPass::Decode) {}

  // One query token per CTA gathers its listed keys (templates/decode/token_list.cuh).
  bool serves_token_lists() const override { return true; }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& t = plan.target;
    const flexjit::decode::DecodeTile tile = flexjit::decode::default_decode_tile(t.head_dim);
    const bool token_list = plan.program->token_indices.has_value();
    GeneratedKernel k;
    k.family = name();
    k.target = t;
    k.tile = {.block_m = flexjit::decode::kRows,
              .block_n = tile.block_n,
              .warps = flexjit::decode::kWarps,
              .stages = tile.stages,
              .q_in_registers = t.head_dim <= 128,
              .min_blocks_per_sm = 1};
    k.params = plan.params;
    k.kv_range_is_full = plan.kv_range_full;
    const std::string entry =
        fmt::format("flexjit_decode_{}_d{}_{}", plan.name, t.head_dim, compiler::element_name(t.dtype));
    k.entries = {{EntryRole::main, entry, k.tile.threads(),
                  flexjit::decode::decode_smem_bytes(t.head_dim, tile.block_n, tile.stages, token_list)},
                 {EntryRole::combine, entry + "_combine", flexjit::decode::kCombineThreads, 0}};
    k.headers = {"common/attention_common.cuh", "decode/attention_decode.cuh", "common/dsl_ops.cuh",
                 "common/interval.cuh"};
    // A mask that reads tensors comes with a data classifier for the forward's tile-map builder
    // (Mods::classify_data); decode classifies chunks with Mods::classify and builds no map.
    if (plan.tile_map.needed) k.headers.push_back("common/tile_map.cuh");

    CudaWriter w(plan.source);
    const std::string rows =
        token_list ? fmt::format("the query heads of one token per CTA (up to {}), its listed keys sorted in shared memory",
                                 k.tile.block_m)
                   : fmt::format("{} (query head, token) rows per CTA", k.tile.block_m);
    write_preamble(w, plan, token_list ? "Token-level top-k (every forward call)" : "Decode against a KV cache",
                   k.family,
                   fmt::format("{}, chunks of {} keys per warp, {} warps, {} stages, split-KV with an LSE merge", rows,
                               k.tile.block_n, k.tile.warps, k.tile.stages),
                   k.headers);
    emit_mods(plan, w);
    write_config(w, fmt::format("flexjit::{}<{}, {}, {}, {}>", token_list ? "DecodeTokenListConfig" : "DecodeConfig",
                                t.head_dim, tile.block_n, tile.stages, compiler::element_cuda_type(t.dtype)),
                 k.main_entry());
    write_decode_entries(w, k, "attention_decode");
    k.source = w.str();
    return k;
  }
};

}  // namespace

const KernelFamily& family() { return single_instance<Decode>(); }

}  // namespace flexjit::codegen::decode

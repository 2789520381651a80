#include "codegen/decode/family.hpp"

#include <fmt/format.h>

#include "codegen/mma_sync_target.hpp"
#include "codegen/cuda_writer.hpp"
#include "codegen/forward_source.hpp"
#include "codegen/mods.hpp"
#include "templates/decode/tiles.cuh"

namespace flexjit::codegen::decode {
namespace {

class Decode final : public KernelFamily {
 public:
  const char* name() const override { return "decode"; }
  compiler::KernelPass pass() const override { return compiler::KernelPass::Decode; }

  std::string refusal(const compiler::KernelTarget& t, const ir::Program&) const override {
    return mma_sync_refusal(t);
  }

  GeneratedKernel generate(const compiler::KernelPlan& plan) const override {
    const compiler::KernelTarget& t = plan.target;
    const flexjit::decode::DecodeTile tile = flexjit::decode::default_decode_tile(t.head_dim);
    GeneratedKernel k;
    k.family = name();
    k.target = t;
    k.tile = {flexjit::decode::kRows, tile.block_n, flexjit::decode::kWarps, tile.stages, t.head_dim <= 128, 1};
    k.threads = k.tile.threads();
    k.shared_bytes = flexjit::decode::decode_smem_bytes(t.head_dim, tile.block_n, tile.stages);
    k.params = plan.params;
    k.kv_range_is_full = plan.kv_range_full;
    k.entry = fmt::format("flexjit_decode_{}_d{}_{}", plan.name, t.head_dim, compiler::element_name(t.dtype));
    k.combine_entry = k.entry + "_combine";
    k.combine_threads = flexjit::decode::kCombineThreads;
    k.headers = {"common/attention_common.cuh", "decode/attention_decode.cuh", "common/dsl_ops.cuh",
                 "common/interval.cuh"};
    // A mask that reads tensors comes with a data classifier for the forward's tile-map builder
    // (Mods::classify_data); decode classifies chunks with Mods::classify and builds no map.
    if (plan.tile_map.needed) k.headers.push_back("common/tile_map.cuh");

    CudaWriter w(plan.source);
    write_preamble(w, plan, "Decode against a KV cache", k.family,
                   fmt::format("{} (query head, token) rows per CTA, chunks of {} keys per warp, {} warps, {} stages, "
                               "split-KV with an LSE merge",
                               k.tile.block_m, k.tile.block_n, k.tile.warps, k.tile.stages),
                   k.headers);
    emit_mods(plan, w);
    w.line(fmt::format("using Cfg = flexjit::DecodeConfig<{}, {}, {}, {}>;", t.head_dim, tile.block_n, tile.stages,
                       compiler::element_cuda_type(t.dtype)));
    w.line(fmt::format("static_assert(Cfg::kSmemBytes == {}, \"shared memory size\");", k.shared_bytes));
    w.line(fmt::format("static_assert(Cfg::kThreads == {}, \"threads per CTA\");", k.threads));
    w.line();
    w.line("extern \"C\" __global__ void __launch_bounds__(Cfg::kThreads, 1)");
    w.line(fmt::format("{}(const __grid_constant__ flexjit::DecodeArgs args,", k.entry));
    w.line("    const __grid_constant__ fj_generated::Mods::Params params) {");
    w.line("  flexjit::attention_decode<fj_generated::Mods, Cfg>(args, params);");
    w.line("}");
    w.line();
    w.line("extern \"C\" __global__ void __launch_bounds__(flexjit::decode::kCombineThreads)");
    w.line(fmt::format("{}(const __grid_constant__ flexjit::DecodeArgs args,", k.combine_entry));
    w.line("    const __grid_constant__ fj_generated::Mods::Params params) {");
    w.line("  flexjit::decode_combine<fj_generated::Mods, Cfg>(args, params);");
    w.line("}");
    k.source = w.str();
    return k;
  }
};

}  // namespace

const KernelFamily& family() {
  static const Decode instance;
  return instance;
}

}  // namespace flexjit::codegen::decode

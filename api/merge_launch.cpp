#include "api/merge_launch.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/compiled_kernel.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/launch_plan.hpp"
#include "jit/cuda_driver.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {
namespace {

constexpr const char* kEntry = "flexjit_merge_attention";

}  // namespace

codegen::GeneratedKernel merge_source(const std::string& arch) {
  codegen::GeneratedKernel g;
  g.family = "merge";
  g.target.arch = arch;
  g.headers = {"common/merge_attention.cuh"};
  g.tile = {.block_m = kMergeWarps, .block_n = 0, .warps = kMergeWarps, .stages = 0, .q_in_registers = false,
            .min_blocks_per_sm = 1};
  g.entries = {{codegen::EntryRole::main, kEntry, kMergeWarps * 32, 0}};
  g.source = fmt::format(
      "// The log-sum-exp merge of partial attentions (flexjit::merge_attention), one warp per row.\n"
      "#include \"common/merge_attention.cuh\"\n\n"
      "extern \"C\" __global__ void __launch_bounds__({0}) {1}(const __grid_constant__ flexjit::MergeArgs args) {{\n"
      "  flexjit::merge_attention_rows(args);\n"
      "}}\n",
      kMergeWarps * 32, kEntry);
  return g;
}

namespace {

// The merge kernel of `arch`, compiled on first use (a disk-cache hit after the first process).
const CompiledKernel& merge_kernel(const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const CompiledKernel>> compiled;
  std::lock_guard lock(mutex);
  std::unique_ptr<const CompiledKernel>& slot = compiled[arch];
  if (!slot) {
    codegen::GeneratedKernel g = merge_source(arch);
    jit::ArtifactPtr artifact = compile_or_explain("merge_attention", g, jit::KernelCache::global());
    slot = std::make_unique<const CompiledKernel>(std::move(g), std::move(artifact));
  }
  return *slot;
}

MergeOut out_of(const TensorView& t) {
  const int element = t.dtype == DType::bf16 ? kMergeBf16 : t.dtype == DType::fp16 ? kMergeFp16 : kMergeF32;
  return {t.data, t.stride(0), t.stride(1), t.stride(2), t.stride(3), element};
}

MergeLse lse_of(const TensorView& t) { return {static_cast<float*>(t.data), t.stride(0), t.stride(1), t.stride(2)}; }

}  // namespace

void launch_merge(std::span<const AttentionPart> parts, const TensorView& out, const TensorView& lse, int device,
                  void* stream) {
  const long long rows = out.shape[0] * out.shape[1] * out.shape[2];
  if (rows == 0 || out.shape[3] == 0) return;  // nothing to merge: nothing to compile either
  const CompiledKernel& kernel = merge_kernel(jit::device_arch(device));
  // Rounds of up to kMergeMaxParts: after the first, the result so far is the first part.
  std::vector<MergeArgs> rounds;
  for (std::size_t next = 0; next < parts.size();) {
    MergeArgs a{};
    a.out = out_of(out);
    a.lse = lse_of(lse);
    a.H = static_cast<int>(out.shape[1]);
    a.T = static_cast<int>(out.shape[2]);
    a.D = static_cast<int>(out.shape[3]);
    a.rows = rows;
    if (next > 0) {
      a.part_out[0] = a.out;
      a.part_lse[0] = a.lse;
      a.parts = 1;
    }
    for (; next < parts.size() && a.parts < kMergeMaxParts; ++next, ++a.parts) {
      a.part_out[a.parts] = out_of(parts[next].out);
      a.part_lse[a.parts] = lse_of(parts[next].lse);
    }
    rounds.push_back(a);
  }
  const unsigned grid = static_cast<unsigned>((rows + kMergeWarps - 1) / kMergeWarps);
  run_launch_plan(kernel, device, stream, [&](const DeviceFacts&) {
    LaunchPlan plan;
    for (MergeArgs& a : rounds) plan.add(kernel.generated, codegen::EntryRole::main, {grid, 1, 1}, {&a});
    return plan;
  });
}

}  // namespace flexjit::api

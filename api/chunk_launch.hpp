// A chunk of many new tokens against a KV cache (chunked prefill) on a CUDA kernel: the prefill
// family's chunk kernel (codegen KernelPass::Chunk) over the forward's grid, each sequence's keys
// read from the cache. plan_chunk checks every argument on the host as the decode call does (never
// the values of kv_lens and page_table); launch_chunk enqueues the kernel.
#pragma once

#include "api/attention_launch.hpp"
#include "api/compiled_kernel.hpp"
#include "api/launch_plan.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

// A call with a KV cache runs the chunk kernel from this many new tokens per sequence (Tq) on;
// fewer run the decode kernel, which packs the (query head, token) rows of a kv head 16 to a CTA
// and splits long caches across CTAs.
constexpr int kChunkMinTokens = 64;

// Whether a forward call with a KV cache runs the chunk kernel: q [B, Hq, Tq, D] with Tq >=
// kChunkMinTokens (the arguments are checked by the plan, not here).
bool runs_chunk_kernel(const TensorView& q, const ForwardOptions& options);

struct ChunkPlan {
  ChunkArgs args{};
  PackedParams params;
  int device = 0;
  TmaMaps maps{};  // the kernel's third argument where it loads with TMA (sm90_chunk)
};

// Throws flexjit::ArgumentError naming each problem; `entry` names the kernel in messages. The
// params are packed by `layout`, the program's (the same for every pass).
ChunkPlan plan_chunk(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                     int head_dim, int head_dim_v, DType dtype, const ForwardTensors& tensors,
                     const ForwardOptions& options);

// The chunk entry over forward_grid (persistent where the tile is); the tensor maps, where the
// kernel takes them, encoded in the launch's context with K and V boxes that never cross a page.
LaunchPlan chunk_launch_plan(const codegen::GeneratedKernel& kernel, ChunkPlan& plan, const DeviceFacts& device);
void launch_chunk(const CompiledKernel& kernel, ChunkPlan& plan, void* stream);

}  // namespace flexjit::api

// One forward call against a KV cache on a CUDA kernel (ForwardOptions::kv_lens, page_table), in
// two halves like the forward's: plan_decode checks every argument on the host (no driver call,
// and the values of kv_lens and page_table are never read there); launch_decode picks the split
// count from the device, enqueues the decode kernel and, with more than one split, the combine
// kernel over a stream-ordered workspace.
#pragma once

#include "api/attention_launch.hpp"
#include "api/compiled_kernel.hpp"
#include "api/launch_plan.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

struct DecodePlan {
  DecodeArgs args{};
  PackedParams params;
  int device = 0;
  int kv_heads_x_row_groups = 0;  // the (kv head, row group) slots: grid.y, folded into grid.x past its limit
  long long keys_per_row = 0;     // the most keys a row walks (Tkv, or K of a token list): splits divide them
  bool token_list = false;        // the rows walk token lists (splits chosen for them)
};

// Throws flexjit::ArgumentError naming each problem, or UnsupportedError for a block-sparse
// program whose lists the decode kernel cannot share between the rows it packs, or token lists of
// more than decode::max_token_list() entries. A program with token lists comes here for every forward
// call, with a KV cache (kv_lens) or without (a plain call: every sequence has Tkv keys). `entry` names the
// kernel in messages. The params are packed by `layout`, the program's (the same for every pass).
// `target` is the program's main kernel's: its head dims (v's of its own: the decode_mla family,
// whose v must be k's first columns where its tile has no V ring) and its architecture.
DecodePlan plan_decode(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                       const compiler::KernelTarget& target, DType dtype, const ForwardTensors& tensors,
                       const ForwardOptions& options);

// The decode entry over grid (splits, kv heads x row groups, B), the split count chosen for the
// device; with more than one split, the combine entry over a workspace of partial rows.
LaunchPlan decode_launch_plan(const codegen::GeneratedKernel& kernel, DecodePlan& plan, const DeviceFacts& device);
void launch_decode(const CompiledKernel& kernel, DecodePlan& plan, void* stream);

}  // namespace flexjit::api

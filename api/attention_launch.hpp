// One forward call, in two halves: plan_forward checks every argument and fills the kernel
// arguments on the host (no driver call, so bad input is reported identically with or without a
// GPU, and nothing is launched); forward_launch_plan answers with the launches for a device, and
// launch_forward runs them.
#pragma once

#include "api/common_args.hpp"
#include "api/compiled_kernel.hpp"
#include "api/launch_plan.hpp"
#include "api/param_packing.hpp"
#include "flexjit/options.hpp"
#include "ir/ir.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

struct ForwardPlan {
  AttnArgs args{};
  PackedParams params;
  TmaMaps maps{};  // encoded at launch for kernels with GeneratedKernel::tensor_maps
  int device = 0;  // CUDA ordinal of the tensors
};

// Checks q, k, v, out and every option against the kernel and the program; throws
// flexjit::ArgumentError naming each problem. Host only.
ForwardPlan plan_forward(const codegen::GeneratedKernel& kernel, const ir::Program& program, DType dtype,
                         const ForwardTensors& tensors, const ForwardOptions& options);

// The grid of a forward-family kernel (the forward's, the chunk's) over a's query tiles: a CTA per
// query tile of each (b, h), or, for a persistent tile, at most one wave of CTAs taking query
// tiles from a counter that this reserves in the workspace, zeroes, and points a.tile_counter at.
// Throws flexjit::ArgumentError when a persistent grid's tiles would not fit its int counter.
std::array<unsigned, 3> forward_grid(const codegen::GeneratedKernel& kernel, AttnArgs& a, const DeviceFacts& device,
                                     LaunchPlan& launches);

// One launch of the main entry over forward_grid; FP8 kernels first run their pre-pass, which
// writes v transposed into the workspace (templates/sm90/fp8.cuh).
LaunchPlan forward_launch_plan(const codegen::GeneratedKernel& kernel, ForwardPlan& plan, const DeviceFacts& device);

// Enqueues the plan on `stream` in the current context (which must belong to the tensors' device),
// or the device's primary context when none is current. Throws flexjit::Error when there is no
// driver, the device or arch does not fit, or the launch fails.
void launch_forward(const CompiledKernel& kernel, ForwardPlan& plan, void* stream);

}  // namespace flexjit::api

// One Kernel::backward call on a CUDA kernel, in two halves like the forward's: plan_backward
// checks every argument on the host (no driver call); launch_backward enqueues, in stream order,
// the zeroing of the captured tensors' gradients, the pre-pass, the transposed tile map's builder
// (masks that read tensors, block lists), the main kernel and the post-pass over a workspace
// allocated and freed in stream order.
#pragma once

#include <string>
#include <vector>

#include "api/attention_launch.hpp"
#include "api/backward_checks.hpp"
#include "api/compiled_kernel.hpp"
#include "api/launch_plan.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

struct BackwardPlan {
  BwdArgs args{};
  PackedParams params;
  std::vector<std::uint64_t> grads;  // Mods::Grads, packed by compiler/grad_layout.hpp
  std::vector<LaunchPlan::Zero> zero_grads;  // the gradients asked for, zeroed before the kernels accumulate
  bool scatter = false;    // score_mod scatters into one of them: the main kernel's grads entry
  std::vector<long long> extents;  // Mods::Extents when the mask reads tensors (the map builder's)
  TileMapArgs map_args{};  // the transposed tile map's builder, when the kernel has one
  BwdTmaMaps maps{};       // the main kernel's tensor maps (GeneratedKernel::tensor_maps: sm90_bwd)
  int device = 0;
};

// Whether score_mod (not only sink) reads a tensor whose gradient `grads` asks for: the call then
// runs the backward module whose main kernel scatters into them.
bool score_scatters(const ir::Program& program, const std::map<std::string, TensorView>& grads);

// Throws flexjit::ArgumentError naming each problem; UnsupportedError for a KV cache. `entry`
// names the kernel in messages. The params are packed by `layout`, the program's (the same for
// every pass).
BackwardPlan plan_backward(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                           int head_dim, int head_dim_v, DType dtype, const BackwardTensors& tensors,
                           const BackwardOptions& options);

// In stream order: zero the captured tensors' gradients asked for, the pre-pass, the transposed
// tile map's builder (when the kernel has one), the main kernel (or its grads entry), the
// post-pass, over one workspace; a kernel with tensor maps gets them encoded in the call's
// context. Throws ArgumentError for a grid too large, before any launch.
LaunchPlan backward_launch_plan(const codegen::GeneratedKernel& kernel, BackwardPlan& plan, const DeviceFacts& device);

// The main kernel's CTAs run in groups of (b, kv head)s (common/bwd_tile.cuh, bwd_kv_tile):
// enough for each group to fill the GPU kBackwardGroupWaves times over, so that a group's heavy
// first kv tiles overlap the next group's work, and few enough that the heads in flight keep
// their Q, dO and dQ accumulator in L2. One group of all the heads where they fill fewer waves;
// groups of equal size (a divisor of the heads). The grid is {heads * kv_tiles, count}.
inline constexpr int kBackwardGroupWaves = 4;
struct BackwardGridGroups {
  int heads;  // per group
  int count;
};
BackwardGridGroups backward_grid_groups(int kv_tiles, int heads, int multiprocessors);

void launch_backward(const CompiledKernel& kernel, BackwardPlan& plan, void* stream);

}  // namespace flexjit::api

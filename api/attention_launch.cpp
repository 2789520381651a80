#include "api/attention_launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "api/binding_resolve.hpp"
#include "api/descale_checks.hpp"
#include "api/position_checks.hpp"
#include "api/forward_checks.hpp"
#include "api/tile_map_launch.hpp"
#include "api/tma_maps.hpp"
#include "templates/sm90/tiles.cuh"
#include "flexjit/error.hpp"

namespace flexjit::api {
namespace {

// The persistent grid numbers its tiles with ints (sm90/attention_fwd.cuh), a wave ahead.
void check_persistent_tiles(const codegen::GeneratedKernel& kernel, int B, int Hq, int Tq) {
  if (!kernel.tile.persistent) return;
  const long long tiles = static_cast<long long>((Tq + kernel.tile.block_m - 1) / kernel.tile.block_m) * Hq * B;
  if (tiles > std::numeric_limits<int>::max() / 2)
    throw ArgumentError(fmt::format("{}: B * Hq * ceil(Tq / {}) = {} query tiles exceed the persistent grid's 2^30",
                                    kernel.entry(), kernel.tile.block_m, tiles));
}

}  // namespace

ForwardPlan plan_forward(const codegen::GeneratedKernel& kernel, const ir::Program& program, DType dtype,
                         const ForwardTensors& t, const ForwardOptions& options) {
  Problems problems;
  auto shape = check_attention_tensors(t.q, t.k, t.v, t.out, options.lse, options.scale, kernel.target.head_dim,
                                       kernel.target.dv(), dtype, problems);
  const Device device = t.q.device.is_cuda() ? t.q.device : Device::cuda(0);
  ir::Env env = resolve_bindings(program, options.bind, device, problems);
  int block_head_group = 1;
  if (shape) block_head_group = check_selection(program, env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  if (shape && options.block_mask)
    check_block_mask(kernel, *options.block_mask, {shape->B, shape->Hq, shape->Tq, shape->Tkv},
                     {options.q_offset, options.kv_offset}, device, env, problems);
  check_positions(options.q_offset, options.kv_offset, shape, problems);
  const Descales descales = check_descales(options, dtype, shape, Memory::cuda, problems);
  problems.raise_if_any(kernel.entry());
  check_persistent_tiles(kernel, shape->B, shape->Hq, shape->Tq);

  ForwardPlan plan;
  fill_common_args(plan.args, t, options.lse ? static_cast<const float*>(options.lse->data) : nullptr, *shape,
                   options.scale, kernel.target.head_dim);
  if (options.block_mask) attach_block_mask(*options.block_mask, plan.args);
  fill_descale_args(plan.args, descales);
  plan.params = pack_params(kernel.params, env, block_head_group, {options.q_offset, options.kv_offset});
  plan.device = device.index;
  return plan;
}

std::array<unsigned, 3> forward_grid(const codegen::GeneratedKernel& kernel, AttnArgs& a, const DeviceFacts& device,
                                     LaunchPlan& launches) {
  const unsigned q_tiles = static_cast<unsigned>((a.Tq + kernel.tile.block_m - 1) / kernel.tile.block_m);
  if (!kernel.tile.persistent) return {q_tiles, static_cast<unsigned>(a.Hq), static_cast<unsigned>(a.B)};
  check_persistent_tiles(kernel, a.B, a.Hq, a.Tq);
  const long long tiles = static_cast<long long>(q_tiles) * a.Hq * a.B;
  const long long wave = static_cast<long long>(device.multiprocessors) * kernel.tile.min_blocks_per_sm;
  const std::size_t counter = launches.reserve(sizeof(int));
  launches.point(a.tile_counter, counter);
  launches.zero.push_back({nullptr, counter, 1});
  return {static_cast<unsigned>(std::max(1LL, std::min(tiles, wave))), 1, 1};
}

namespace {

// FP8 kernels: the pre-pass that writes v transposed into the workspace (AttnArgs::vt), before
// the main kernel, whose tensor map of v is over it.
void plan_transposed_v(const codegen::GeneratedKernel& kernel, AttnArgs& a, LaunchPlan& launches) {
  constexpr int kGroup = sm90::kFp8KeyGroup;
  a.vt_keys = (a.Tkv + kGroup - 1) / kGroup * kGroup;
  const std::size_t bytes = static_cast<std::size_t>(a.B) * a.Hkv * kernel.target.dv() * a.vt_keys;
  launches.point(a.vt, launches.reserve(bytes));
  const unsigned blocks = static_cast<unsigned>((a.vt_keys + sm90::kFp8TransposeKeys - 1) / sm90::kFp8TransposeKeys);
  launches.add(kernel, codegen::EntryRole::prep, {blocks, static_cast<unsigned>(a.Hkv), static_cast<unsigned>(a.B)},
               {&a});
}

}  // namespace

LaunchPlan forward_launch_plan(const codegen::GeneratedKernel& kernel, ForwardPlan& plan, const DeviceFacts& device) {
  std::vector<void*> args = {&plan.args, plan.params.data()};
  if (kernel.tensor_maps) args.push_back(&plan.maps);
  LaunchPlan launches;
  const std::array<unsigned, 3> grid = forward_grid(kernel, plan.args, device, launches);
  if (kernel.has_entry(codegen::EntryRole::prep)) plan_transposed_v(kernel, plan.args, launches);
  // Tensor maps are encoded in the launch's context (the driver wants one current).
  if (kernel.tensor_maps) launches.in_context = [&kernel, &plan] { plan.maps = encode_tma_maps(kernel, plan.args); };
  launches.add(kernel, codegen::EntryRole::main, grid, std::move(args));
  return launches;
}

void launch_forward(const CompiledKernel& kernel, ForwardPlan& plan, void* stream) {
  run_launch_plan(kernel, plan.device, stream,
                  [&](const DeviceFacts& device) { return forward_launch_plan(kernel.generated, plan, device); });
}

}  // namespace flexjit::api

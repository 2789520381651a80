#include "api/backward_launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "api/binding_resolve.hpp"
#include "api/forward_checks.hpp"
#include "api/position_checks.hpp"
#include "api/param_packing.hpp"
#include "api/tile_map_geometry.hpp"
#include "api/tma_maps.hpp"
#include "ir/gradient_captures.hpp"
#include "compiler/grad_layout.hpp"
#include "compiler/plan.hpp"
#include "flexjit/error.hpp"

namespace flexjit::api {
namespace {

// The deterministic dQ's replicas of the accumulator (at most; one per kv tile at most). Each
// kv tile waits at a query tile for the lower kv tiles of its replica to have added, so the
// CTAs of a head start one add apart along that chain; R replicas cut the chain by R, for R times
// the accumulator's memory and a post-pass that reads them all. 1 (the kernels' order before
// replicas) until more have been measured on a GPU.
constexpr int kDeterministicDqReplicas = 1;

// Mods::Grads: each gradient's pointer (null when not asked for), the bound tensor's extents and
// the gradient's strides.
std::vector<std::uint64_t> pack_grads(const compiler::GradLayout& layout, const std::map<std::string, TensorView>& grads,
                                      const ir::Env& env) {
  std::vector<std::uint64_t> words(static_cast<std::size_t>(layout.size / 8), 0);
  for (const compiler::GradField& f : layout.fields) {
    const auto g = grads.find(f.tensor);
    if (g == grads.end()) continue;
    const std::size_t at = static_cast<std::size_t>(f.offset / 8);
    std::memcpy(&words[at], &g->second.data, sizeof(void*));
    const std::vector<std::int64_t>& shape = env.tensors.at(f.tensor).shape;
    const std::vector<std::int64_t> strides = g->second.effective_strides();
    for (int d = 0; d < f.rank; ++d) {
      const std::int64_t n = shape[static_cast<std::size_t>(d)], s = strides[static_cast<std::size_t>(d)];
      std::memcpy(&words[at + 1 + static_cast<std::size_t>(d)], &n, 8);
      std::memcpy(&words[at + 1 + static_cast<std::size_t>(f.rank + d)], &s, 8);
    }
  }
  return words;
}

}  // namespace

bool score_scatters(const ir::Program& program, const std::map<std::string, TensorView>& grads) {
  for (const auto& entry : grads)
    if (ir::mod_reads(program.score_mod, entry.first)) return true;
  return false;
}

BackwardPlan plan_backward(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                           int head_dim, int head_dim_v, DType dtype, const BackwardTensors& t,
                           const BackwardOptions& options) {
  Problems problems;
  const std::optional<AttentionShape> shape = check_attention_tensors(
      t.q, t.k, t.v, t.out, std::optional<TensorView>(t.lse), options.scale, head_dim, head_dim_v, dtype, problems,
      Memory::cuda);
  check_backward_tensors(t, shape, dtype, problems, Memory::cuda);
  const Device device = t.q.device.is_cuda() ? t.q.device : Device::cuda(0);
  const ir::Env env = resolve_bindings(program, options.bind, device, problems);
  int block_head_group = 1;
  if (shape) block_head_group = check_selection(program, env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  check_gradient_targets(program, options.grads, env, problems, Memory::cuda, device);
  check_positions(options.q_offset, options.kv_offset, shape, problems);
  problems.raise_if_any(entry);

  BackwardPlan plan;
  BwdArgs& a = plan.args;
  fill_common_args(a, {t.q, t.k, t.v, t.out}, static_cast<const float*>(t.lse.data), *shape, options.scale, head_dim);
  a.dout = t.dout.data;
  a.dq = t.dq.data, a.dk = t.dk.data, a.dv = t.dv.data;
  const auto strides = [](const TensorView& x, long long& sb, long long& sh, long long& st) {
    sb = x.stride(0), sh = x.stride(1), st = x.stride(2);
  };
  strides(t.dout, a.do_b, a.do_h, a.do_t);
  strides(t.dq, a.dq_b, a.dq_h, a.dq_t);
  strides(t.dk, a.dk_b, a.dk_h, a.dk_t);
  strides(t.dv, a.dv_b, a.dv_h, a.dv_t);

  plan.params = pack_params(layout, env, block_head_group, {options.q_offset, options.kv_offset});
  plan.grads = pack_grads(compiler::grad_layout(program), options.grads, env);
  for (const auto& [name, g] : options.grads) plan.zero_grads.push_back({g.data, 0, static_cast<std::size_t>(g.numel())});
  plan.scatter = score_scatters(program, options.grads);
  if (compiler::tile_map_needs(program).needed) plan.extents = pack_extents(program, env);
  plan.device = device.index;
  return plan;
}

BackwardGridGroups backward_grid_groups(int kv_tiles, int heads, int multiprocessors) {
  const long long wanted = std::clamp<long long>(
      (static_cast<long long>(kBackwardGroupWaves) * multiprocessors + kv_tiles - 1) / kv_tiles, 1, heads);
  // The divisor of the heads nearest to that (by ratio), with at most grid.y's limit of groups:
  // groups of equal size, so that no CTA is left without a head.
  const auto off = [&](long long d) {
    return std::max(static_cast<double>(d) / wanted, static_cast<double>(wanted) / d);
  };
  long long best = heads;
  for (long long i = 1; i * i <= heads; ++i) {
    if (heads % i != 0) continue;
    for (const long long d : {i, heads / i})
      if (heads / d <= kMaxGridYZ && off(d) < off(best)) best = d;
  }
  return {static_cast<int>(best), static_cast<int>(heads / best)};
}

LaunchPlan backward_launch_plan(const codegen::GeneratedKernel& g, BackwardPlan& plan, const DeviceFacts& device) {
  using codegen::EntryRole;
  BwdArgs& a = plan.args;
  const int block_m = g.tile.block_m, block_n = g.tile.block_n;
  // Thrown while planning, before anything is enqueued, so a refused call leaves the gradients untouched.
  const int kv_tiles = (a.Tkv + block_n - 1) / block_n;
  const long long ctas = static_cast<long long>(kv_tiles) * a.Hkv * a.B;
  if (ctas > std::numeric_limits<int>::max())
    throw ArgumentError(fmt::format("{}: B * Hkv * ceil(Tkv / {}) = {} backward CTAs exceed the grid's 2^31 - 1",
                                    g.entry(), block_n, ctas));
  const BackwardGridGroups groups = backward_grid_groups(kv_tiles, a.Hkv * a.B, device.multiprocessors);
  a.kv_heads_per_group = groups.heads;
  LaunchPlan launches;
  // The workspace: dQ's fp32 accumulator, lse2 and delta over rows padded to whole query tiles,
  // then the transposed tile map when the kernel builds one.
  a.Tq_pad = (a.Tq + block_m - 1) / block_m * block_m;
  const std::size_t rows = static_cast<std::size_t>(a.B) * static_cast<std::size_t>(a.Hq) * static_cast<std::size_t>(a.Tq_pad);
  // The deterministic dQ adds into replicas of the accumulator (BwdArgs::dq_replicas): a query
  // tile's ordered adds then form that many shorter chains.
  a.dq_replicas = g.target.ordered_dq ? std::max(1, std::min(kDeterministicDqReplicas, kv_tiles)) : 1;
  a.dq_replica_floats = static_cast<long long>(rows) * g.target.head_dim;
  const std::size_t replicas = static_cast<std::size_t>(a.dq_replicas);
  launches.point(a.dq_accum, launches.reserve(replicas * rows * static_cast<std::size_t>(g.target.head_dim) * sizeof(float)));
  launches.point(a.lse2, launches.reserve(rows * sizeof(float)));
  launches.point(a.delta, launches.reserve(rows * sizeof(float)));
  if (g.target.ordered_dq) {
    // One counter per (replica, b, query head, query tile), zeroed: the turns of the kv tiles
    // adding into it.
    const std::size_t counters = replicas * (rows / static_cast<std::size_t>(block_m));
    const std::size_t at = launches.reserve(counters * sizeof(int));
    launches.point(a.dq_turns, at);
    launches.zero.push_back({nullptr, at, counters});
  }
  for (const LaunchPlan::Zero& z : plan.zero_grads) launches.zero.push_back(z);

  std::vector<void*> args = {&a, plan.params.data(), plan.grads.data()};
  const std::array<unsigned, 3> rows_pass = {static_cast<unsigned>(a.Tq_pad / g.pass_rows), static_cast<unsigned>(a.Hq),
                                             static_cast<unsigned>(a.B)};
  launches.add(g, EntryRole::prep, rows_pass, args);
  const TileMapGeometry map = tile_map_geometry(g, TileMapRows::kv_tiles, a.B, a.Hq, a.Tq, a.Tkv);
  if (map.ints() > 0) {
    const std::size_t at = launches.reserve(map.ints() * sizeof(int));
    // The map's pointers are workspace addresses: the builder's and the main kernel's fields
    // are both patched once the workspace exists.
    plan.map_args = map.builder_args(a.Tq, a.Tkv);
    a.tile_map = map.ref();
    launches.point(plan.map_args.counts, at);
    launches.point(plan.map_args.entries, at + map.entries_offset());
    launches.point(a.tile_map.counts, at);
    launches.point(a.tile_map.entries, at + map.entries_offset());
    // The builder takes Mods::Extents when the mask reads tensors.
    launches.add(g, EntryRole::tile_map, map.builder_grid(), {&plan.map_args, plan.params.data(), plan.extents.data()});
  }
  // Groups of (b, kv head)s along y, kv tile slowest in each (bwd_kv_tile says why); the module's
  // grads entry when score_mod scatters into a captured tensor's gradient (the kernel was compiled
  // for the call).
  const bool scatter = g.has_entry(EntryRole::grads);
  if (scatter != plan.scatter)
    throw InternalError(fmt::format("{}: a backward module {} the captured tensors' gradients for a call that asks "
                                    "for {}", g.entry(), scatter ? "with" : "without", plan.scatter ? "them" : "none"));
  std::vector<void*> main_args = args;
  if (g.tensor_maps) {
    launches.in_context = [&g, &plan] { plan.maps = encode_bwd_tma_maps(g, plan.args); };
    main_args.push_back(&plan.maps);
  }
  launches.add(g, scatter ? EntryRole::grads : EntryRole::main,
               {static_cast<unsigned>(groups.heads) * static_cast<unsigned>(kv_tiles),
                static_cast<unsigned>(groups.count), 1},
               main_args);
  launches.add(g, EntryRole::post, rows_pass, args);
  return launches;
}

void launch_backward(const CompiledKernel& kernel, BackwardPlan& plan, void* stream) {
  run_launch_plan(kernel, plan.device, stream,
                  [&](const DeviceFacts& device) { return backward_launch_plan(kernel.generated, plan, device); });
}

}  // namespace flexjit::api

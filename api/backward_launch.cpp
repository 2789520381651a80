#include "api/backward_launch.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "api/binding_resolve.hpp"
#include "api/forward_checks.hpp"
#include "api/param_packing.hpp"
#include "api/stream_workspace.hpp"
#include "ir/gradient_captures.hpp"
#include "compiler/grad_layout.hpp"
#include "compiler/plan.hpp"
#include "flexjit/error.hpp"
#include "jit/cuda_driver.hpp"

namespace flexjit::api {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

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

// Whether score_mod (not only sink) reads a tensor whose gradient is asked for.
bool score_scatters(const ir::Program& program, const std::map<std::string, TensorView>& grads) {
  for (const auto& entry : grads)
    if (ir::mod_reads(program.score_mod, entry.first)) return true;
  return false;
}

// The transposed tile map's shape: a row per (map batch, map head, kv tile) of n_q_tiles entries,
// after one count per row; no ints when the kernel has no builder.
struct QTileMap {
  int q_tiles = 0, kv_tiles = 0, maps_b = 0, maps_h = 0;
  std::size_t rows() const { return static_cast<std::size_t>(maps_b) * static_cast<std::size_t>(maps_h) * static_cast<std::size_t>(kv_tiles); }
  std::size_t ints() const { return rows() * (1 + static_cast<std::size_t>(q_tiles)); }
};

QTileMap q_tile_map_geometry(const codegen::GeneratedKernel& g, const BwdArgs& a) {
  if (g.tile_map_entry.empty()) return {};
  return {(a.Tq + g.tile.block_m - 1) / g.tile.block_m, (a.Tkv + g.tile.block_n - 1) / g.tile.block_n,
          g.tile_map_per_batch ? a.B : 1, g.tile_map_per_head ? a.Hq : 1};
}

}  // namespace

BackwardPlan plan_backward(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                           int head_dim, DType dtype, const BackwardTensors& t, const BackwardOptions& options) {
  Problems problems;
  const std::optional<AttentionShape> shape = check_attention_tensors(
      t.q, t.k, t.v, t.out, std::optional<TensorView>(t.lse), options.scale, head_dim, dtype, problems, Memory::cuda);
  check_backward_tensors(t, shape, dtype, problems, Memory::cuda);
  const Device device = t.q.device.is_cuda() ? t.q.device : Device::cuda(0);
  const ir::Env env = resolve_bindings(program, options.bind, device, problems);
  int block_head_group = 1;
  if (shape) block_head_group = check_block_indices(program, env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  check_gradient_targets(program, options.grads, env, problems, Memory::cuda, device);
  problems.raise_if_any(entry);

  BackwardPlan plan;
  BwdArgs& a = plan.args;
  a.q = t.q.data, a.k = t.k.data, a.v = t.v.data, a.o = t.out.data, a.dout = t.dout.data;
  a.lse = static_cast<const float*>(t.lse.data);
  a.dq = t.dq.data, a.dk = t.dk.data, a.dv = t.dv.data;
  a.B = shape->B, a.Hq = shape->Hq, a.Hkv = shape->Hkv, a.Tq = shape->Tq, a.Tkv = shape->Tkv;
  const auto strides = [](const TensorView& x, long long& sb, long long& sh, long long& st) {
    sb = x.stride(0), sh = x.stride(1), st = x.stride(2);
  };
  strides(t.q, a.q_b, a.q_h, a.q_t);
  strides(t.k, a.k_b, a.k_h, a.k_t);
  strides(t.v, a.v_b, a.v_h, a.v_t);
  strides(t.out, a.o_b, a.o_h, a.o_t);
  strides(t.dout, a.do_b, a.do_h, a.do_t);
  strides(t.dq, a.dq_b, a.dq_h, a.dq_t);
  strides(t.dk, a.dk_b, a.dk_h, a.dk_t);
  strides(t.dv, a.dv_b, a.dv_h, a.dv_t);
  a.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
  a.scale_log2 = a.scale * kLog2e;

  plan.params = pack_params(layout, env, block_head_group);
  plan.grads = pack_grads(compiler::grad_layout(program), options.grads, env);
  for (const auto& [name, g] : options.grads) plan.zero.push_back({g.data, static_cast<std::size_t>(g.numel())});
  plan.scatter = score_scatters(program, options.grads);
  if (compiler::tile_map_needs(program).needed) plan.extents = pack_extents(program, env);
  plan.device = device.index;
  return plan;
}

void launch_backward(const BackwardKernel& k, BackwardPlan& plan, void* stream) {
  const codegen::GeneratedKernel& g = k.generated;
  in_launch_context(g.entry, g.target.arch, plan.device, [&](CUcontext context) {
    BwdArgs& a = plan.args;
    const CUstream s = static_cast<CUstream>(stream);
    const int block_m = g.tile.block_m, block_n = g.tile.block_n, D = g.target.head_dim;
    // Checked before anything is enqueued, so that a refused call leaves the gradients untouched.
    const long long ctas = static_cast<long long>((a.Tkv + block_n - 1) / block_n) * a.Hkv * a.B;
    if (ctas > std::numeric_limits<int>::max())
      throw ArgumentError(fmt::format("{}: B * Hkv * ceil(Tkv / {}) = {} backward CTAs exceed the grid's 2^31 - 1",
                                      g.entry, block_n, ctas));
    a.Tq_pad = (a.Tq + block_m - 1) / block_m * block_m;
    const std::size_t rows = static_cast<std::size_t>(a.B) * static_cast<std::size_t>(a.Hq) * static_cast<std::size_t>(a.Tq_pad);
    const QTileMap map = q_tile_map_geometry(g, a);
    StreamWorkspace workspace(rows * static_cast<std::size_t>(D + 2) * sizeof(float) + map.ints() * sizeof(int), s);
    a.dq_accum = workspace.floats();
    a.lse2 = a.dq_accum + rows * static_cast<std::size_t>(D);
    a.delta = a.lse2 + rows;
    for (const BackwardPlan::Zero& z : plan.zero)
      jit::check(jit::driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(z.data), 0, z.floats, s),
                 "cuMemsetD32Async");

    void* args[] = {&a, plan.params.data(), plan.grads.data()};
    jit::LaunchConfig rows_pass;
    rows_pass.grid[0] = static_cast<unsigned>(a.Tq_pad / g.pass_rows);
    rows_pass.grid[1] = static_cast<unsigned>(a.Hq);
    rows_pass.grid[2] = static_cast<unsigned>(a.B);
    rows_pass.block[0] = static_cast<unsigned>(g.pass_threads);
    rows_pass.stream = s;
    launch(context, k.prep.get(context, plan.device), rows_pass, args);

    if (map.ints() > 0) {
      TileMapArgs m{};
      m.counts = reinterpret_cast<int*>(a.delta + rows);
      m.entries = m.counts + map.rows();
      m.Tq = a.Tq, m.Tkv = a.Tkv;
      m.n_q_tiles = map.q_tiles, m.n_kv_tiles = map.kv_tiles;
      m.Hm = map.maps_h;
      a.tile_counts = m.counts;
      a.tile_entries = m.entries;
      a.tm_h_stride = g.tile_map_per_head ? map.kv_tiles : 0;
      a.tm_b_stride = g.tile_map_per_batch ? map.maps_h * map.kv_tiles : 0;
      a.tm_q_tiles = map.q_tiles;
      jit::LaunchConfig build;
      build.grid[0] = static_cast<unsigned>(map.kv_tiles);
      build.grid[1] = static_cast<unsigned>(map.maps_h);
      build.grid[2] = static_cast<unsigned>(map.maps_b);
      build.block[0] = static_cast<unsigned>(g.tile_map_threads);
      build.stream = s;
      void* map_args[] = {&m, plan.params.data(), plan.extents.data()};  // the builder takes Extents when it has them
      launch(context, k.q_tile_map.get(context, plan.device), build, map_args);
    }

    jit::LaunchConfig main;  // one dimension, kv tile slowest (attention_bwd_sm80 says why)
    main.grid[0] = static_cast<unsigned>(ctas);
    main.block[0] = static_cast<unsigned>(g.threads);
    main.shared_bytes = static_cast<unsigned>(g.shared_bytes);
    main.stream = s;
    const bool scatter = plan.scatter && !g.grads_entry.empty();
    launch(context, (scatter ? k.grads : k.main).get(context, plan.device), main, args);

    launch(context, k.post.get(context, plan.device), rows_pass, args);
  });
}

}  // namespace flexjit::api

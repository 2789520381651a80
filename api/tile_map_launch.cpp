#include "api/tile_map_launch.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <limits>

#include "compiler/param_layout.hpp"
#include "api/binding_resolve.hpp"
#include "api/forward_checks.hpp"
#include "api/position_checks.hpp"
#include "api/tile_map_geometry.hpp"

namespace flexjit::api {
namespace {

TileMapGeometry geometry(const codegen::GeneratedKernel& kernel, const MaskShape& s) {
  return tile_map_geometry(kernel, TileMapRows::query_tiles, s.B, s.Hq, s.Tq, s.Tkv);
}

void check_shape(const MaskShape& s, Problems& problems) {
  auto positive = [&](const char* name, int v) {
    if (v < 1) problems.add(fmt::format("{} must be >= 1, got {}", name, v));
  };
  positive("B", s.B);
  positive("Hq", s.Hq);
  positive("Tq", s.Tq);
  positive("Tkv", s.Tkv);
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

std::uint64_t block_mask_kernel_id(const codegen::GeneratedKernel& kernel) { return fnv1a(kernel.source); }

// The scalars' values and the tensors' shapes (what the builder's classification depends on
// besides the tensors' contents).
std::uint64_t block_mask_bindings_id(const ir::Env& env) {
  std::string text;
  for (const auto& [name, value] : env.scalars) text += name + "=" + value.to_string() + ";";
  for (const auto& [name, t] : env.tensors) {
    text += name + ":";
    for (auto d : t.shape) text += std::to_string(d) + ",";
    text += ";";
  }
  return fnv1a(text);
}

namespace {

bool contiguous(const TensorView& t) {
  std::int64_t expect = 1;
  for (int d = t.rank() - 1; d >= 0; --d) {
    if (t.shape[static_cast<std::size_t>(d)] > 1 && t.stride(d) != expect) return false;
    expect *= t.shape[static_cast<std::size_t>(d)];
  }
  return true;
}

std::string no_map_reason(const ir::Program& program) {
  if (!program.mask_mod) return "the program has no mask_mod, so every tile is visited and none needs classifying";
  if (program.block_indices) return "the program's BlockIndices list already decides which kv blocks are visited";
  return "its mask_mod reads no captured tensor: kv ranges and tile classes come in closed form, so there is "
         "nothing to build";
}

}  // namespace

std::size_t tile_map_bytes(const codegen::GeneratedKernel& kernel, const MaskShape& shape) {
  if (shape.B < 1 || shape.Hq < 1 || shape.Tq < 1 || shape.Tkv < 1) return 0;
  return geometry(kernel, shape).ints() * sizeof(int);
}

TileMapPlan plan_tile_map(const codegen::GeneratedKernel& kernel, const ir::Program& program,
                          const TensorView& storage, const MaskShape& shape, const BlockMaskOptions& options) {
  const std::string context = kernel.entry() + ": build_block_mask";
  Problems problems;
  if (!kernel.has_entry(codegen::EntryRole::tile_map)) {
    problems.add(no_map_reason(program));
    problems.raise_if_any(context);
  }
  check_shape(shape, problems);
  const Device device = storage.device.is_cuda() ? storage.device : Device::cuda(0);
  check_placement("storage", storage, device, 4, problems);
  const std::size_t need = tile_map_bytes(kernel, shape);
  const std::size_t have = static_cast<std::size_t>(storage.numel()) * static_cast<std::size_t>(dtype_size(storage.dtype));
  if (need > 0 && have < need)
    problems.add(fmt::format("storage holds {} bytes, but a map for B={} Hq={} Tq={} Tkv={} needs {} "
                             "(Kernel::block_mask_bytes)",
                             have, shape.B, shape.Hq, shape.Tq, shape.Tkv, need));
  if (!contiguous(storage)) problems.add("storage must be contiguous (the map is written as one block)");
  ir::Env env = resolve_bindings(program, options.bind, device, problems);
  check_positions(options.q_offset, options.kv_offset, shape.Tq, shape.Tkv, problems);
  problems.raise_if_any(context);

  const TileMapGeometry g = geometry(kernel, shape);
  TileMapPlan plan;
  plan.args = g.builder_args(static_cast<int*>(storage.data), shape.Tq, shape.Tkv);
  plan.params = pack_params(kernel.params, env, 1, {options.q_offset, options.kv_offset});
  plan.extents = pack_extents(program, env);
  plan.grid = g.builder_grid();

  BlockMask& m = plan.mask;
  m.storage = storage.data;
  m.device = device.index;
  m.kernel = kernel.entry();
  m.block_m = kernel.tile.block_m;
  m.block_n = kernel.tile.block_n;
  m.B = shape.B;
  m.Hq = shape.Hq;
  m.Tq = shape.Tq;
  m.Tkv = shape.Tkv;
  m.q_offset = options.q_offset;
  m.kv_offset = options.kv_offset;
  m.per_batch = kernel.tile_map_per_batch;
  m.per_head = kernel.tile_map_per_head;
  m.q_tiles = g.q_tiles;
  m.kv_tiles = g.kv_tiles;
  m.kernel_id = block_mask_kernel_id(kernel);
  m.bindings_id = block_mask_bindings_id(env);
  return plan;
}

LaunchPlan tile_map_launch_plan(const codegen::GeneratedKernel& kernel, TileMapPlan& plan) {
  LaunchPlan launches;
  // Extents is never empty: a builder exists only when the mask reads a capture.
  launches.add(kernel, codegen::EntryRole::tile_map, plan.grid, {&plan.args, plan.params.data(), plan.extents.data()});
  return launches;
}

void launch_tile_map(const CompiledKernel& kernel, TileMapPlan& plan, void* stream) {
  run_launch_plan(kernel, plan.mask.device, stream,
                  [&](const DeviceFacts&) { return tile_map_launch_plan(kernel.generated, plan); });
}

void check_block_mask(const codegen::GeneratedKernel& kernel, const BlockMask& m, const MaskShape& s,
                      CallPositions positions, const Device& device, const ir::Env& env, Problems& problems) {
  if (m.empty()) {
    problems.add("block_mask is empty (build it with Kernel::build_block_mask)");
    return;
  }
  if (!kernel.has_entry(codegen::EntryRole::tile_map)) {
    problems.add("block_mask given, but this kernel's mask reads no captured tensor and follows no block mask");
    return;
  }
  auto same = [&](const char* what, long long built, long long now) {
    if (built != now) problems.add(fmt::format("block_mask was built for {}={}, but this call has {}={}", what, built, what, now));
  };
  // First: a map for other positions was built by the kernel that adds them (or does not), whose
  // source fingerprint differs too, and the offsets are what to tell.
  if (m.q_offset != positions.q_offset || m.kv_offset != positions.kv_offset) {
    same("q_offset", m.q_offset, positions.q_offset);
    same("kv_offset", m.kv_offset, positions.kv_offset);
    return;
  }
  if (m.kernel != kernel.entry() || m.block_m != kernel.tile.block_m || m.block_n != kernel.tile.block_n) {
    problems.add(fmt::format("block_mask was built by kernel {} with {}x{} tiles, not by this one ({}x{} tiles)",
                             m.kernel, m.block_m, m.block_n, kernel.tile.block_m, kernel.tile.block_n));
    return;
  }
  if (m.kernel_id != block_mask_kernel_id(kernel)) {
    problems.add(fmt::format("block_mask was built by another program's kernel of the same name ({})", m.kernel));
    return;
  }
  if (m.bindings_id != block_mask_bindings_id(env))
    problems.add("block_mask was built with other scalar values or tensor shapes than this call binds; rebuild it");
  same("Tq", m.Tq, s.Tq);
  same("Tkv", m.Tkv, s.Tkv);
  if (m.per_batch) same("B", m.B, s.B);
  if (m.per_head) same("Hq", m.Hq, s.Hq);
  if (device.is_cuda() && m.device != device.index)
    problems.add(fmt::format("block_mask lives on cuda:{}, but q is on cuda:{}", m.device, device.index));
  const TileMapGeometry g = geometry(kernel, s);
  if (m.q_tiles != g.q_tiles || m.kv_tiles != g.kv_tiles || m.per_batch != kernel.tile_map_per_batch ||
      m.per_head != kernel.tile_map_per_head)
    problems.add("block_mask's geometry does not match its shape (was it modified after build_block_mask?)");
}

void attach_block_mask(const BlockMask& m, AttnArgs& a) {
  const TileMapGeometry g{.rows_are = TileMapRows::query_tiles,
                          .q_tiles = m.q_tiles,
                          .kv_tiles = m.kv_tiles,
                          .maps_b = m.maps_b(),
                          .maps_h = m.maps_h()};
  a.tile_map = g.ref(static_cast<const int*>(m.storage));
}

}  // namespace flexjit::api

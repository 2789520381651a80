#include "api/decode_launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "api/binding_resolve.hpp"
#include "api/forward_checks.hpp"
#include "api/kv_cache_checks.hpp"
#include "api/stream_workspace.hpp"
#include "flexjit/error.hpp"
#include "jit/cuda_driver.hpp"
#include "jit/driver_extras.hpp"
#include "templates/decode/tiles.cuh"

namespace flexjit::api {
namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr long long kGridYMax = 65535;
constexpr long long kGridXMax = 2147483647;
// Splits stop where a split would get fewer chunks than this per warp (8192 keys per split at
// 32 keys a chunk): below, each CTA's fixed cost (Q, the kv range, the merge, the partial row)
// shows (B = 1, 131072 keys: 152 us with 16 splits, 212 us with 64; bench/NOTES.md).
constexpr int kMinChunksPerWarp = 64;
constexpr int kMaxSplits = 256;
// Waves of CTAs to aim for: more than one lets the short sequences of a ragged batch finish while
// the long ones still have splits in the queue (8 ragged sequences of up to 65536 keys: 347 us
// with one wave, 282 us with four).
constexpr int kWaves = 4;

// What the split heuristic asks of a device, once per process.
struct DeviceShape {
  int multiprocessors = 0;
  int shared_per_multiprocessor = 0;
};

DeviceShape device_shape(int device) {
  static std::mutex mutex;
  static std::map<int, DeviceShape> known;
  std::lock_guard lock(mutex);
  auto it = known.find(device);
  if (it == known.end()) {
    DeviceShape s;
    s.multiprocessors = jit::device_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    s.shared_per_multiprocessor =
        jit::device_attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    it = known.emplace(device, s).first;
  }
  return it->second;
}

// Enough CTAs for kWaves full waves of the device, as long as each split keeps kMinChunksPerWarp
// chunks per warp of the longest sequence the cache can hold (the lengths stay on the device).
int choose_splits(const DecodeKernel& k, const DecodeArgs& a, int grid_yz, const DeviceShape& dev) {
  const int per_sm = std::max(1, dev.shared_per_multiprocessor / (k.generated.shared_bytes + 1024));
  const long long wave = static_cast<long long>(dev.multiprocessors) * per_sm * kWaves;
  if (grid_yz >= wave) return 1;
  const long long chunks = (static_cast<long long>(a.capacity) + k.generated.tile.block_n - 1) / k.generated.tile.block_n;
  const long long by_work = std::max(1LL, chunks / (static_cast<long long>(kMinChunksPerWarp) * k.generated.tile.warps));
  return static_cast<int>(std::clamp(wave / grid_yz, 1LL, std::min<long long>(by_work, kMaxSplits)));
}

}  // namespace

DecodePlan plan_decode(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                       int head_dim, DType dtype, const ForwardTensors& t, const ForwardOptions& options) {
  Problems problems;
  const KvLayout kv = kv_layout(options);
  auto shape = check_attention_tensors(t.q, t.k, t.v, t.out, options.lse, options.scale, head_dim, dtype, problems,
                                       Memory::cuda, kv);
  const std::optional<KvCache> cache = check_kv_cache(options, shape, problems, Memory::cuda);
  const Device device = t.q.device.is_cuda() ? t.q.device : Device::cuda(0);
  ir::Env env = resolve_bindings(program, options.bind, device, problems);
  int block_head_group = 1;
  if (shape) block_head_group = check_block_indices(program, env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  if (options.block_mask)
    problems.add("block_mask: decode against a KV cache takes none (its keys are classified per chunk)");
  problems.raise_if_any(entry);

  const int group = shape->Hq / shape->Hkv;
  // Rows packed per CTA: every (query head, token) row of a kv head, 16 at a time, unless each
  // query head has block lists of its own (then a CTA takes the tokens of one head).
  int rows_per_cta = decode::kRows;
  if (program.block_indices) {
    const int q_block = program.block_indices->q_block;
    if (shape->Tq > q_block)
      throw UnsupportedError(fmt::format(
          "{}: decode against a KV cache with block lists needs every new token in one query block: Tq={} is more "
          "than the {} rows of a block of '{}'",
          entry, shape->Tq, q_block, program.block_indices->name));
    if (block_head_group == 1 && group > 1) {
      if (shape->Tq > decode::kRows)
        throw UnsupportedError(fmt::format(
            "{}: decode against a KV cache with block lists per query head needs Tq <= {}, got Tq={}", entry,
            decode::kRows, shape->Tq));
      rows_per_cta = shape->Tq;
    }
  }
  const long long rows = static_cast<long long>(group) * shape->Tq;
  const long long row_groups = (rows + rows_per_cta - 1) / rows_per_cta;
  if (row_groups * shape->Hkv > kGridYMax)
    problems.add(fmt::format("Tq={} x {} query heads per kv head x Hkv={} is more than one decode launch covers "
                             "({} CTAs of {} rows along grid.y)",
                             shape->Tq, group, shape->Hkv, kGridYMax, decode::kRows));
  if (static_cast<long long>(shape->B) * shape->Hq * shape->Tq / decode::kCombineRows > kGridXMax)
    problems.add(fmt::format("B={} x Hq={} x Tq={} rows are more than one decode launch covers", shape->B, shape->Hq,
                             shape->Tq));
  problems.raise_if_any(entry);

  DecodePlan plan;
  DecodeArgs& a = plan.args;
  a.q = t.q.data;
  a.k = t.k.data;
  a.v = t.v.data;
  a.o = t.out.data;
  a.lse = options.lse ? static_cast<float*>(options.lse->data) : nullptr;
  a.kv_lens = static_cast<const int*>(options.kv_lens->data);
  a.lens_stride = options.kv_lens->stride(0);
  const bool paged = kv == KvLayout::paged;
  if (paged) {
    a.page_table = static_cast<const int*>(options.page_table->data);
    a.pt_b = options.page_table->stride(0);
    a.pt_p = options.page_table->stride(1);
  }
  a.B = shape->B;
  a.Hq = shape->Hq;
  a.Hkv = shape->Hkv;
  a.Tq = shape->Tq;
  a.group = group;
  a.capacity = shape->Tkv;  // max_pages * page_size when paged (check_kv_cache)
  a.page_size = shape->page_size;
  a.num_pages = shape->num_pages;
  a.max_pages = cache->max_pages;
  a.rows_per_cta = rows_per_cta;
  a.row_groups = static_cast<int>(row_groups);
  a.splits = 1;
  a.q_b = t.q.stride(0), a.q_h = t.q.stride(1), a.q_t = t.q.stride(2);
  // Paged k, v are [num_pages, page_size, Hkv, D]: the "batch" stride is the page's, the token
  // stride the slot's.
  a.k_b = t.k.stride(0), a.k_h = t.k.stride(paged ? 2 : 1), a.k_t = t.k.stride(paged ? 1 : 2);
  a.v_b = t.v.stride(0), a.v_h = t.v.stride(paged ? 2 : 1), a.v_t = t.v.stride(paged ? 1 : 2);
  a.o_b = t.out.stride(0), a.o_h = t.out.stride(1), a.o_t = t.out.stride(2);
  a.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
  a.scale_log2 = a.scale * kLog2e;

  plan.params = pack_params(layout, env, block_head_group);
  plan.device = device.index;
  plan.kv_heads_x_row_groups = static_cast<int>(row_groups * shape->Hkv);
  return plan;
}

void launch_decode(const DecodeKernel& k, DecodePlan& plan, void* stream) {
  const codegen::GeneratedKernel& g = k.generated;
  in_launch_context(g.entry, g.target.arch, plan.device, [&](CUcontext context) {
    DecodeArgs& a = plan.args;
    const CUstream s = static_cast<CUstream>(stream);
    jit::LaunchConfig main;
    main.grid[1] = static_cast<unsigned>(plan.kv_heads_x_row_groups);
    main.grid[2] = static_cast<unsigned>(a.B);
    main.block[0] = static_cast<unsigned>(g.threads);
    main.shared_bytes = static_cast<unsigned>(g.shared_bytes);
    main.stream = s;
    a.splits = choose_splits(k, a, plan.kv_heads_x_row_groups * a.B, device_shape(plan.device));
    main.grid[0] = static_cast<unsigned>(a.splits);
    void* args[] = {&a, plan.params.data()};
    CUfunction main_fn = k.main.get(context, plan.device);
    if (a.splits == 1) {
      launch(context, main_fn, main, args);
      return;
    }
    const long long rows = static_cast<long long>(a.B) * a.Hq * a.Tq;
    const std::size_t partials = static_cast<std::size_t>(a.splits) * static_cast<std::size_t>(rows);
    StreamWorkspace workspace(partials * (static_cast<std::size_t>(g.target.head_dim) + 1) * sizeof(float), s);
    a.part_o = workspace.floats();
    a.part_lse = a.part_o + partials * static_cast<std::size_t>(g.target.head_dim);
    launch(context, main_fn, main, args);
    jit::LaunchConfig combine;
    combine.grid[0] = static_cast<unsigned>((rows + decode::kCombineRows - 1) / decode::kCombineRows);
    combine.block[0] = static_cast<unsigned>(g.combine_threads);
    combine.stream = s;
    launch(context, k.combine.get(context, plan.device), combine, args);
  });
}

}  // namespace flexjit::api

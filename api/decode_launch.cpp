#include "api/decode_launch.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "api/cache_call.hpp"
#include "flexjit/error.hpp"
#include "templates/decode/mla_tiles.cuh"
#include "templates/decode/tiles.cuh"

namespace flexjit::api {
namespace {

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
// Token lists: every split of a list reads and sorts the whole list (up to 4096 keys, comparable
// to walking a few hundred listed rows) and walks its share, so splits aim at one wave and stop
// at two chunks per warp: a batch of 64 lists of 2048 keys fills half an H100 unsplit (64 CTAs).
constexpr int kTokenListWaves = 1;
constexpr int kTokenListMinChunksPerWarp = 2;

// Enough CTAs for `waves` full waves of the device, as long as each split keeps
// `min_chunks_per_warp` chunks per warp (or the family's split_min_keys) of the longest sequence
// the cache can hold (the lengths stay on the device) or of the list.
int choose_splits(const codegen::GeneratedKernel& g, long long keys, int grid_yz, const DeviceFacts& dev, bool token_list) {
  const int waves = token_list ? kTokenListWaves : kWaves;
  const int min_chunks_per_warp = token_list ? kTokenListMinChunksPerWarp : kMinChunksPerWarp;
  const int per_sm = std::max(1, dev.shared_per_multiprocessor / (g.main_entry().shared_bytes + 1024));
  const long long wave = static_cast<long long>(dev.multiprocessors) * per_sm * waves;
  if (grid_yz >= wave) return 1;
  const long long chunks = (keys + g.tile.block_n - 1) / g.tile.block_n;
  const long long by_work =
      std::max(1LL, g.split_min_keys > 0 ? keys / g.split_min_keys
                                         : chunks / (static_cast<long long>(min_chunks_per_warp) * g.tile.warps));
  return static_cast<int>(std::clamp(wave / grid_yz, 1LL, std::min<long long>(by_work, kMaxSplits)));
}

// Token lists: a CTA's rows are query heads of one new token that share one list, so as many heads
// of the kv head's group as divide it, up to the kernel's `most` rows; one head when each query
// head has a list of its own (list_head_group 1).
int token_list_rows_per_cta(int group, int list_head_group, int most) {
  if (list_head_group == 1) return 1;
  int rows = std::min(group, most);
  while (group % rows != 0) --rows;
  return rows;
}

// Whether v is k's first columns: the same storage and strides, fewer columns (MLA's absorbed form).
bool v_within_k(const ForwardTensors& t) {
  if (t.v.data != t.k.data || t.v.rank() != t.k.rank() || t.v.shape.back() > t.k.shape.back()) return false;
  for (int d = 0; d < t.k.rank(); ++d)  // stride() per dim: no vectors on the per-step decode path
    if (t.v.stride(d) != t.k.stride(d)) return false;
  return true;
}

}  // namespace

DecodePlan plan_decode(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                       const compiler::KernelTarget& target, DType dtype, const ForwardTensors& t,
                       const ForwardOptions& options) {
  const int head_dim = target.head_dim, head_dim_v = target.dv();
  const CacheCall call = check_cache_call(entry, program, head_dim, head_dim_v, dtype, t, options);
  const AttentionShape& shape = call.shape;
  Problems problems;
  const int group = shape.Hq / shape.Hkv;
  // v of its own head dim runs on the decode_mla kernel, which reads v from k's rows unless its
  // tile has a V ring of its own (decode/mla_tiles.cuh).
  const bool mla = head_dim_v != head_dim;
  const bool v_in_k = mla && v_within_k(t);
  if (mla && !v_in_k &&
      !decode_mla::choose_tile(head_dim, head_dim_v, compiler::arch_number(target.arch).value_or(0),
                               program.token_indices ? decode::decode_token_list_bytes() : 0)
           .separate_v)
    problems.add(fmt::format("v: the decode_mla kernel at head dims {} / {} on {} reads v from k's rows, so v must be "
                             "a view of k's first {} columns (k's data pointer and strides, last dim {})",
                             head_dim, head_dim_v, target.arch, head_dim_v, head_dim_v));
  // Rows packed per CTA: every (query head, token) row of a kv head, 16 at a time (decode_mla: 64),
  // unless each query head has block lists of its own (then a CTA takes the tokens of one head).
  int rows_per_cta = mla ? decode_mla::kRows : decode::kRows;
  // The keys a row may walk: the sequence's, or a token list's K when fewer (what splits divide).
  long long keys_per_row = shape.Tkv;
  if (const auto& tokens = program.token_indices) {
    rows_per_cta = token_list_rows_per_cta(group, call.block_head_group, rows_per_cta);
    const long long K = call.env.tensors.at(tokens->name).shape.at(3);
    if (K > decode::max_token_list())
      throw UnsupportedError(fmt::format(
          "{}: token indices '{}' list K={} keys per query row; the CUDA kernel takes at most {} (cpu kernels take "
          "any K)",
          entry, tokens->name, K, decode::max_token_list()));
    keys_per_row = std::min(keys_per_row, K);
  } else if (program.block_indices) {
    const int q_block = program.block_indices->q_block;
    if (shape.Tq > q_block)
      throw UnsupportedError(fmt::format(
          "{}: decode against a KV cache with block lists needs every new token in one query block: Tq={} is more "
          "than the {} rows of a block of '{}'",
          entry, shape.Tq, q_block, program.block_indices->name));
    if (call.block_head_group == 1 && group > 1) {
      if (shape.Tq > decode::kRows)
        throw UnsupportedError(fmt::format(
            "{}: decode against a KV cache with block lists per query head needs Tq <= {}, got Tq={}", entry,
            decode::kRows, shape.Tq));
      rows_per_cta = shape.Tq;
    }
  }
  const long long rows = static_cast<long long>(group) * shape.Tq;
  const long long row_groups = (rows + rows_per_cta - 1) / rows_per_cta;
  if (row_groups * shape.Hkv > kGridXMax)
    problems.add(fmt::format("Tq={} x {} query heads per kv head x Hkv={} is more than one decode launch covers "
                             "({} CTAs of {} rows)",
                             shape.Tq, group, shape.Hkv, kGridXMax, rows_per_cta));
  if (static_cast<long long>(shape.B) * shape.Hq * shape.Tq / decode::kCombineRows > kGridXMax)
    problems.add(fmt::format("B={} x Hq={} x Tq={} rows are more than one decode launch covers", shape.B, shape.Hq,
                             shape.Tq));
  problems.raise_if_any(entry);

  DecodePlan plan;
  DecodeArgs& a = plan.args;
  // Tkv is what the cache holds: max_pages * page_size when paged (check_kv_cache).
  fill_common_args(a, t, options.lse ? static_cast<const float*>(options.lse->data) : nullptr, shape, options.scale,
                   head_dim, call.kv);
  // A plain forward call (token lists) has no cache: a null kv_lens gives every sequence Tkv keys.
  if (call.has_cache) a.cache = kv_cache_ref(options, shape, call.cache);
  a.group = group;
  a.rows_per_cta = rows_per_cta;
  a.row_groups = static_cast<int>(row_groups);
  a.splits = 1;
  a.v_in_k = v_in_k ? 1 : 0;

  plan.params = pack_params(layout, call.env, call.block_head_group, {options.q_offset, options.kv_offset});
  plan.device = call.device.index;
  plan.kv_heads_x_row_groups = static_cast<int>(row_groups * shape.Hkv);
  plan.keys_per_row = keys_per_row;
  plan.token_list = program.token_indices.has_value();
  return plan;
}

LaunchPlan decode_launch_plan(const codegen::GeneratedKernel& g, DecodePlan& plan, const DeviceFacts& device) {
  DecodeArgs& a = plan.args;
  a.splits = choose_splits(g, plan.keys_per_row, plan.kv_heads_x_row_groups * a.B, device, plan.token_list);
  LaunchPlan launches;
  const std::vector<void*> args = {&a, plan.params.data()};
  // (kv head, row group) slots past grid.y's limit fold into grid.x (decode_slot in
  // templates/decode/attention_decode.cuh).
  const long long slots = plan.kv_heads_x_row_groups;
  const long long folds = (slots + kMaxGridYZ - 1) / kMaxGridYZ;
  launches.add(g, codegen::EntryRole::main,
               {static_cast<unsigned>(a.splits * folds), static_cast<unsigned>((slots + folds - 1) / folds),
                static_cast<unsigned>(a.B)},
               args);
  if (a.splits == 1) return launches;
  // Each split's normalised partial rows and LSEs, merged by the combine entry.
  const long long rows = static_cast<long long>(a.B) * a.Hq * a.Tq;
  const std::size_t partials = static_cast<std::size_t>(a.splits) * static_cast<std::size_t>(rows);
  launches.point(a.part_o, launches.reserve(partials * static_cast<std::size_t>(g.target.dv()) * sizeof(float)));
  launches.point(a.part_lse, launches.reserve(partials * sizeof(float)));
  launches.add(g, codegen::EntryRole::combine,
               {static_cast<unsigned>((rows + decode::kCombineRows - 1) / decode::kCombineRows), 1, 1}, args);
  return launches;
}

void launch_decode(const CompiledKernel& kernel, DecodePlan& plan, void* stream) {
  run_launch_plan(kernel, plan.device, stream,
                  [&](const DeviceFacts& device) { return decode_launch_plan(kernel.generated, plan, device); });
}

}  // namespace flexjit::api

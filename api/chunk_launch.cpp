#include "api/chunk_launch.hpp"

#include <numeric>

#include "api/cache_call.hpp"
#include "api/tma_maps.hpp"

namespace flexjit::api {

bool runs_chunk_kernel(const TensorView& q, const ForwardOptions& options) {
  return options.kv_lens && q.shape.size() == 4 && q.shape[2] >= kChunkMinTokens;
}

ChunkPlan plan_chunk(const std::string& entry, const compiler::ParamLayout& layout, const ir::Program& program,
                     int head_dim, int head_dim_v, DType dtype, const ForwardTensors& t, const ForwardOptions& options) {
  const CacheCall call = check_cache_call(entry, program, head_dim, head_dim_v, dtype, t, options);
  ChunkPlan plan;
  ChunkArgs& a = plan.args;
  // Tkv is what the cache holds: max_pages * page_size when paged (check_kv_cache).
  fill_common_args(a, t, options.lse ? static_cast<const float*>(options.lse->data) : nullptr, call.shape,
                   options.scale, head_dim, call.kv);
  a.cache = kv_cache_ref(options, call.shape, call.cache);
  plan.params = pack_params(layout, call.env, call.block_head_group, {options.q_offset, options.kv_offset});
  plan.device = call.device.index;
  return plan;
}

LaunchPlan chunk_launch_plan(const codegen::GeneratedKernel& kernel, ChunkPlan& plan, const DeviceFacts& device) {
  ChunkArgs& a = plan.args;
  // A box of rows never crosses a page: gcd(block_n, page_size), both multiples of 16.
  a.kv_box_rows = a.cache.page_table ? std::gcd(kernel.tile.block_n, a.cache.page_size) : kernel.tile.block_n;
  LaunchPlan launches;
  const std::array<unsigned, 3> grid = forward_grid(kernel, a, device, launches);
  std::vector<void*> args = {&plan.args, plan.params.data()};
  if (kernel.tensor_maps) {
    args.push_back(&plan.maps);
    launches.in_context = [&kernel, &plan] { plan.maps = encode_chunk_tma_maps(kernel, plan.args); };
  }
  launches.add(kernel, codegen::EntryRole::main, grid, std::move(args));
  return launches;
}

void launch_chunk(const CompiledKernel& kernel, ChunkPlan& plan, void* stream) {
  run_launch_plan(kernel, plan.device, stream,
                  [&](const DeviceFacts& device) { return chunk_launch_plan(kernel.generated, plan, device); });
}

}  // namespace flexjit::api

#include "api/cache_call.hpp"

#include "api/binding_resolve.hpp"
#include "api/forward_checks.hpp"
#include "api/position_checks.hpp"

namespace flexjit::api {

CacheCall check_cache_call(const std::string& entry, const ir::Program& program, int head_dim, int head_dim_v,
                           DType dtype, const ForwardTensors& t, const ForwardOptions& options) {
  Problems problems;
  CacheCall call;
  call.kv = kv_layout(options);
  auto shape = check_attention_tensors(t.q, t.k, t.v, t.out, options.lse, options.scale, head_dim, head_dim_v, dtype,
                                       problems, Memory::cuda, call.kv);
  const std::optional<KvCache> cache = check_kv_cache(options, shape, problems, Memory::cuda);
  call.device = t.q.device.is_cuda() ? t.q.device : Device::cuda(0);
  call.env = resolve_bindings(program, options.bind, call.device, problems);
  if (shape)
    call.block_head_group = check_selection(program, call.env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  if (options.block_mask)
    problems.add(cache || !program.token_indices
                     ? "block_mask: a call with a KV cache takes none (its kernels classify each sequence's keys)"
                     : "block_mask: a program with token lists takes none (each query row's list gives its keys)");
  check_positions(options.q_offset, options.kv_offset, shape, problems);
  problems.raise_if_any(entry);
  call.shape = *shape;
  call.cache = cache.value_or(KvCache{});
  call.has_cache = cache.has_value();
  return call;
}

}  // namespace flexjit::api

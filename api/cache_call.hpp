// A forward call with a KV cache (ForwardOptions::kv_lens, page_table) on a CUDA kernel, checked
// on the host: shapes, dtypes, where the tensors live, the bindings, the positions; never the
// values of kv_lens and page_table (the kernels check those as they read them). What the decode and
// the chunk launches share. Internal to the library.
#pragma once

#include <string>

#include "api/attention_launch.hpp"
#include "api/kv_cache_checks.hpp"
#include "ir/interpreter.hpp"

namespace flexjit::api {

struct CacheCall {
  AttentionShape shape;  // Tkv: the keys a sequence can hold (max_pages * page_size when paged)
  KvCache cache;
  bool has_cache = false;  // false: a plain forward call (token lists on the decode kernel)
  KvLayout kv = KvLayout::dense;
  Device device;
  ir::Env env;
  int block_head_group = 1;  // check_selection's
};

// Throws flexjit::ArgumentError naming every problem; `entry` names the kernel in messages. Without
// kv_lens (a plain forward call of a program with token lists) every sequence holds Tkv keys.
CacheCall check_cache_call(const std::string& entry, const ir::Program& program, int head_dim, int head_dim_v,
                           DType dtype, const ForwardTensors& tensors, const ForwardOptions& options);

}  // namespace flexjit::api

// ForwardOptions::kv_lens and page_table, checked on the host against the call's shape. For cpu
// kernels (host memory) the values too: every length within what k and v hold, every page a
// length reaches within k and v. For CUDA kernels the tensors are device memory, which the host
// never reads (a decode step must not wait for the GPU): the decode kernel checks the values as it
// reads them, and a sequence with a bad one gets NaN rows (templates/common/kernel_args.cuh).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flexjit/options.hpp"
#include "api/argument_problems.hpp"
#include "api/forward_checks.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

// The options' values as the CPU back end reads them.
struct KvCache {
  std::vector<std::int32_t> lens;   // [B]; empty for device memory
  std::vector<std::int32_t> pages;  // [B, max_pages] row-major; empty when k and v are dense or on the device
  int max_pages = 0;                // 0 when k and v are dense
};

// The layout k and v must have for these options.
KvLayout kv_layout(const ForwardOptions& options);

// Adds one problem per mistake (at most a few per tensor for the values, then a count). Returns
// the cache (its values for host memory) when the options give one and nothing in it is wrong,
// else nullopt. With a page table, sets shape->Tkv to the keys a row of it holds (max_pages *
// page_size). `memory`: where the kernel needs the tensors (cuda: next to q on its device).
std::optional<KvCache> check_kv_cache(const ForwardOptions& options, std::optional<AttentionShape>& shape,
                                      Problems& problems, Memory memory = Memory::host);

// What a CUDA kernel reads of a checked cache (device pointers and strides, the pool's geometry).
KvCacheRef kv_cache_ref(const ForwardOptions& options, const AttentionShape& shape, const KvCache& cache);

}  // namespace flexjit::api

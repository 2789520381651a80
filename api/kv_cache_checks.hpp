// ForwardOptions::kv_lens and page_table, checked on the host against the call's shape, values
// included: every length within what k and v hold, every page a length reaches within k and v.
// The values are read, so the tensors must be host memory (cpu kernels).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flexjit/options.hpp"
#include "api/argument_problems.hpp"
#include "api/forward_checks.hpp"

namespace flexjit::api {

// The options' values as the CPU back end reads them.
struct KvCache {
  std::vector<std::int32_t> lens;   // [B]
  std::vector<std::int32_t> pages;  // [B, max_pages] row-major; empty when k and v are dense
  int max_pages = 0;
};

// The layout k and v must have for these options.
KvLayout kv_layout(const ForwardOptions& options);

// Adds one problem per mistake (at most a few per tensor for the values, then a count). Returns
// the values when the options give a KV cache and nothing in it is wrong, else nullopt. With a
// page table, sets shape->Tkv to the keys a row of it holds (max_pages * page_size).
std::optional<KvCache> check_kv_cache(const ForwardOptions& options, std::optional<AttentionShape>& shape,
                                      Problems& problems);

}  // namespace flexjit::api

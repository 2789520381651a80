// ForwardOptions::q_offset / kv_offset (and BackwardOptions'): global positions of a shard.
#pragma once

#include <cstdint>
#include <optional>

#include "api/argument_problems.hpp"
#include "api/forward_checks.hpp"

namespace flexjit::api {

// Each offset >= 0 and the last position it gives (offset + T - 1) an int32 value, as the mods'
// indices are in the kernels. `shape` may be missing (other problems reported it).
void check_positions(std::int64_t q_offset, std::int64_t kv_offset, const std::optional<AttentionShape>& shape,
                     Problems& problems);
// The same for a call of Tq rows and Tkv keys (a block mask's shape).
void check_positions(std::int64_t q_offset, std::int64_t kv_offset, std::int64_t Tq, std::int64_t Tkv,
                     Problems& problems);

}  // namespace flexjit::api

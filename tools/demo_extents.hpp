#pragma once
// The shape `flexjit run --demo` gives a captured tensor it fills with random values: each
// dimension as long as the indices the mods read it with can reach (b -> B, h -> H, q_idx -> Tq,
// kv_idx -> Tkv, kv_idx - q_idx + 128 -> Tq + Tkv + 127, h // 2 -> ceil(H / 2)), by interval
// analysis over the call's shape and the bound scalars. An index with no bound (read from
// another tensor, a float) gets the longest of B, H, Tq and Tkv, as a user would guess.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flexjit/options.hpp"
#include "ir/ir.hpp"

namespace flexjit::tools {

struct DemoShape {
  int B = 1, Hq = 1, Tq = 1, Tkv = 1;
};

// Extents per dimension of every captured tensor of rank >= 1, by name.
std::map<std::string, std::vector<std::int64_t>> demo_extents(const ir::Program& program, const DemoShape& shape,
                                                              const std::map<std::string, Binding>& scalars);

}  // namespace flexjit::tools

// Cases at global positions (ForwardOptions::q_offset, kv_offset: a shard of a longer sequence,
// as context parallelism runs it), for the forward and backward suites: masks in closed form,
// masks that read tensors (the forward suite also follows a block mask built at the offsets),
// block lists and score mods that read positions, on both families, with queries after the keys,
// keys after the queries (a causal pair that keeps nothing: out 0, lse -inf, zero gradients) and a
// query shard far along the sequence. The captured tensors cover the global positions
// (case_bindings.hpp). Decode at offsets: decode_test.cpp.
#pragma once

#include <vector>

#include "tests/gpu/attention_case.hpp"

namespace flexjit::gpu_test {

std::vector<Case> forward_position_cases();
std::vector<Case> backward_position_cases();

}  // namespace flexjit::gpu_test

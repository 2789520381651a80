// Packs the values bound to a program's declarations into the bytes of the generated kernel's
// `Mods::Params` struct, field by field as compiler/param_layout.hpp describes it (the code
// generator writes the struct from the same description, with static_asserts on every offset).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/interpreter.hpp"
#include "compiler/param_layout.hpp"

namespace flexjit::api {

// Params bytes, 8-byte aligned storage of layout.size bytes (rounded up to whole words).
struct PackedParams {
  std::vector<std::uint64_t> words;
  int size = 0;
  void* data() { return words.data(); }
  const void* data() const { return words.data(); }
};

// ints as 8-byte long long, floats as 4-byte float, bools as a 4-byte int 0 / 1, tensors as the
// base pointer and one 8-byte stride (in elements) per dimension; a block-index list as pointer,
// strides of its first three dims and K (its last dim) as an int. `env` must bind everything the
// layout names (resolve_bindings has checked that); a missing value is an internal error.
// block_head_group: Hq / (the H dimension of the bound block-index list), 1 when there is none.
// positions: the call's q_offset and kv_offset (check_positions has kept them below 2^31).
struct CallPositions {
  std::int64_t q_offset = 0, kv_offset = 0;
};
PackedParams pack_params(const compiler::ParamLayout& layout, const ir::Env& env, int block_head_group = 1,
                         CallPositions positions = {});

// Mods::Extents of a program whose mask reads tensors (what the tile-map builders clip their
// index boxes to): each bound capture's size per dimension, in compiler::extents_layout's order.
std::vector<long long> pack_extents(const ir::Program& program, const ir::Env& env);

}  // namespace flexjit::api

// Whether a call's box of global positions can keep any (query, key) pair: what a
// context-parallel step asks before it spends a call on a shard pair (Kernel::may_keep_any).
#pragma once

#include <cstdint>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::api {

// Interval analysis of mask_mod (ir/bounds.hpp) over queries [q_offset, q_offset + Tq), keys
// [kv_offset, kv_offset + Tkv), every batch entry and head, and the int and bool scalars `env`
// binds: false when no pair of the box can be kept (exact: each row of the call sees no key),
// true when some may be (tensor reads and float arithmetic count as anything, so true may be
// conservative). Block and token lists are not consulted. A program without mask_mod keeps all.
bool may_keep_any(const ir::Program& program, const ir::Env& env, std::int64_t q_offset, std::int64_t Tq,
                  std::int64_t kv_offset, std::int64_t Tkv);

}  // namespace flexjit::api

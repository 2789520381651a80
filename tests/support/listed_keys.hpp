#pragma once
// What the oracles read from a program's key list, the plain way (one scan of the list per pair,
// independent of the kernels' selection code): whether row i of (b, h) may see key j.
#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::test {

// BlockIndices: int32 [B, H, q blocks, K], true when j's kv block is listed for i's query block.
// TokenIndices: int32 [B, H, Tq, K], true when j is listed for row i. H = Hq, or Hkv (or 1) when
// bound per kv head (for every head); -1 is padding. True for programs without a list, or when
// env does not bind it.
bool listed(const ir::Program& p, const ir::Env& env, int Hq, int b, int h, int i, int j);

}  // namespace flexjit::test

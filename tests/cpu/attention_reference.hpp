#pragma once
// The naive FlexAttention forward the CPU attention is checked against: float64 everywhere except
// where the contract says fp32 (the score handed to score_mod and what the mods return), mods
// through the interpreter, written straight from DESIGN.md with no shared code.
#include <vector>

#include "cpu/attention.hpp"

namespace cpu_test {

struct ReferenceOutput {
  std::vector<double> out;  // [B, Hq, Tq, D]
  std::vector<double> lse;  // [B, Hq, Tq]
};

// Applies the BlockIndices list when env binds it (same rule as cpu_attention_forward).
ReferenceOutput reference_attention(const flexjit::ir::Program& p, const flexjit::cpu::CpuAttentionInputs& in);

// ||a - b|| / ||b|| over all elements (0 when both are 0).
double relative_l2(const std::vector<float>& a, const std::vector<double>& b);

}  // namespace cpu_test

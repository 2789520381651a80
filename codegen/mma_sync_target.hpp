#pragma once
// What every mma.sync kernel (the sm80_fwd and decode families) needs of a target: a head dim
// that is a multiple of 16 in [16, 256] (m16n8k16 steps, 16-byte rows) and sm_80 or newer
// (cp.async, bf16 tensor cores). One copy of the rule and of its messages.
#include <string>

#include "compiler/target.hpp"

namespace flexjit::codegen {

// Empty when the target can run an mma.sync kernel, else why not.
std::string mma_sync_refusal(const compiler::KernelTarget& target);

}  // namespace flexjit::codegen

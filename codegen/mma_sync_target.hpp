#pragma once
// What every mma.sync kernel (the sm80_fwd, decode and sm80_bwd families) needs of a target: a head dim
// that is a multiple of 16 in [16, 256] (m16n8k16 steps, 16-byte rows) and sm_80 or newer
// (cp.async, bf16 tensor cores). One copy of the rule and of its messages.
#include <string>

#include "codegen/family.hpp"
#include "compiler/target.hpp"

namespace flexjit::codegen {

// Empty when the target can run an mma.sync kernel, else why not.
std::string mma_sync_refusal(const compiler::KernelTarget& target);

// A family of mma.sync kernels: it refuses what mma_sync_refusal refuses, and a family with more
// rules adds them to this refusal.
class MmaSyncFamily : public KernelFamily {
 public:
  using KernelFamily::KernelFamily;
  std::string refusal(const compiler::KernelTarget& target, const ir::Program&) const override {
    return mma_sync_refusal(target);
  }
};

}  // namespace flexjit::codegen

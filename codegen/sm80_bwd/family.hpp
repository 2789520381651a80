#pragma once
// sm80_bwd: the training backward for sm_80 and newer (mma.sync; templates/sm80/attention_bwd.cuh):
// a pre-pass, a main kernel per block of keys that keeps dK and dV in registers and adds dQ by
// atomics, and a post-pass. Serves the backward pass (compiler::KernelPass::Backward) for head
// dims that are multiples of 16 up to 128, bf16 and fp16, every mask, score mod and sink the
// derivative pass can differentiate.
#include "codegen/family.hpp"

namespace flexjit::codegen::sm80_bwd {

const KernelFamily& family();

}  // namespace flexjit::codegen::sm80_bwd

#pragma once
// sm80_fwd: the FlashAttention-2 class forward kernel (mma.sync m16n8k16, cp.async, ldmatrix) for
// sm_80 and newer, templates/sm80/attention_fwd.cuh. Serves every head dim that is a multiple of
// 16 in [16, 256], bf16 and fp16. sm80_chunk: the same kernel for a chunk of new tokens against a
// KV cache (compiler::KernelPass::Chunk), each sequence's keys read from its pages.
#include "codegen/family.hpp"

namespace flexjit::codegen::sm80_fwd {

const KernelFamily& family();
const KernelFamily& chunk_family();

}  // namespace flexjit::codegen::sm80_fwd

#pragma once
// The sm90 forward family: warp-specialized TMA + wgmma kernels for sm_90a
// (templates/sm90/attention_fwd.cuh). sm90_chunk: the same kernel for a chunk of new tokens against
// a KV cache (compiler::KernelPass::Chunk), paged K and V loaded in boxes that each lie in a page.
#include "codegen/family.hpp"

namespace flexjit::codegen::sm90_fwd {

const KernelFamily& family();
const KernelFamily& chunk_family();

}  // namespace flexjit::codegen::sm90_fwd

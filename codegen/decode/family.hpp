#pragma once
// decode: a few new query tokens per sequence against a KV cache, dense with per-sequence lengths
// or paged (vLLM's layout): GQA packing, split-KV with an LSE merge, mma.sync for sm_80 and newer
// (templates/decode/attention_decode.cuh). Serves the decode pass (compiler::KernelPass::Decode)
// for every head dim that is a multiple of 16 in [16, 256], bf16 and fp16.
#include "codegen/family.hpp"

namespace flexjit::codegen::decode {

const KernelFamily& family();

}  // namespace flexjit::codegen::decode

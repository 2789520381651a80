#pragma once
// decode: a few new query tokens per sequence against a KV cache, dense with per-sequence lengths
// or paged (vLLM's layout): GQA packing, split-KV with an LSE merge, mma.sync for sm_80 and newer
// (templates/decode/attention_decode.cuh). Serves the decode pass (compiler::KernelPass::Decode)
// for every head dim that is a multiple of 16 in [16, 256], bf16 and fp16.
#include "codegen/family.hpp"

namespace flexjit::codegen::decode {

const KernelFamily& family();

// decode_mla: decode where v and out have a head dim of their own (q, k of 576 with v of 512, k's
// first columns, as multi-head latent attention's absorbed form; 192 with 128): up to 64 packed
// rows per CTA whose warps share each chunk of keys (templates/decode/attention_decode_mla.cuh).
const KernelFamily& mla_family();

// sm90_mla: the absorbed form (576 / 512, v in k's rows) on sm_90a with wgmma: a producer
// warpgroup gathers the keys' rows, two consumer warpgroups share each pair of chunks
// (templates/decode/attention_decode_mla_sm90.cuh). Chosen before decode_mla where it serves.
const KernelFamily& mla_sm90_family();

}  // namespace flexjit::codegen::decode

#pragma once
// The tensor maps (TMA descriptors) of kernels that load with the copy engine
// (GeneratedKernel::tensor_maps; templates/sm90/attention_fwd.cuh): q, k and v as 4-D tensors
// (D, T, H, B) with byte strides, 128-byte swizzle, boxes of 64 columns x block_m rows (q) or
// block_n rows (k, v). Needs the CUDA driver (the encoding is a driver call, on the host).
#include "codegen/generated_kernel.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

// Throws flexjit::CudaError naming the tensor when the driver refuses a map (e.g. a zero stride
// along a dimension of more than one element).
TmaMaps encode_tma_maps(const codegen::GeneratedKernel& kernel, const AttnArgs& args);
// A chunk against a KV cache (sm90_chunk): q's as the forward's; paged k and v as the page pool
// (D, page_size, Hkv, num_pages) in boxes of args.kv_box_rows rows, dense ones as the forward's.
TmaMaps encode_chunk_tma_maps(const codegen::GeneratedKernel& kernel, const ChunkArgs& args);
// The backward's (sm90_bwd): q and dout in boxes of block_m rows, k and v of block_n.
BwdTmaMaps encode_bwd_tma_maps(const codegen::GeneratedKernel& kernel, const BwdArgs& args);

}  // namespace flexjit::api

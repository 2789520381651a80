// What an fp8_e4m3 kernel does not run: it computes the forward on dense k and v only (FP8 inputs
// serve inference prefill; training keeps 16-bit tensors). Shared by the cpu and CUDA paths so
// that both refuse alike.
#pragma once

#include <string>

#include "flexjit/options.hpp"

namespace flexjit::api {

// Throws flexjit::UnsupportedError "<kernel_name>: ..." when `dtype` is fp8_e4m3 and the call
// gives a KV cache (kv_lens or page_table).
void refuse_fp8_kv_cache(const std::string& kernel_name, DType dtype, const ForwardOptions& options);

// Throws flexjit::UnsupportedError "<kernel_name>: ..." when `dtype` is fp8_e4m3 (any backward).
void refuse_fp8_backward(const std::string& kernel_name, DType dtype);

}  // namespace flexjit::api

#include "api/fp8_passes.hpp"

#include <fmt/format.h>

#include "flexjit/error.hpp"

namespace flexjit::api {

void refuse_fp8_kv_cache(const std::string& kernel_name, DType dtype, const ForwardOptions& options) {
  if (dtype != DType::fp8_e4m3 || (!options.kv_lens && !options.page_table)) return;
  const char* given = !options.page_table ? "kv_lens" : options.kv_lens ? "kv_lens and page_table" : "page_table";
  throw UnsupportedError(fmt::format("{}: fp8_e4m3 kernels run the forward without a KV cache only ({} given); use a "
                                     "bf16 or fp16 kernel for calls with a KV cache",
                                     kernel_name, given));
}

void refuse_fp8_backward(const std::string& kernel_name, DType dtype) {
  if (dtype != DType::fp8_e4m3) return;
  throw UnsupportedError(fmt::format("{}: fp8_e4m3 kernels run the forward without a KV cache only: there is no "
                                     "backward; use a bf16 or fp16 kernel for training",
                                     kernel_name));
}

}  // namespace flexjit::api

// `flexjit run` on a CUDA device through the public API: compile, upload, launch, time, download.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "tools/run_inputs.hpp"

namespace flexjit::tools {

// A forward call's tensors in device memory, kept for a backward on the same call: q, k, v and
// out in the kernel's dtype (out in bf16 for fp8_e4m3), lse float32 [B, Hq, Tq], and the bindings as device views (scalars,
// and the bound tensors, uploaded in their declared dtypes into `captured`).
struct CudaTensors {
  DeviceBuffer q, k, v, out, lse;
  std::vector<DeviceBuffer> captured;
  std::map<std::string, Binding> bind;
};

struct CudaRun {
  std::string device;        // "cuda:0 (NVIDIA H200, sm_90a)"
  std::string kernel;        // entry name
  std::string compile_note;  // "compiled in 0.412 s" / "memory cache hit" / "disk cache hit (2.1 ms)"
  double ms_per_call = 0;    // median over the timed calls (CUDA events)
  int timed_calls = 0;
  // Masks that read captured tensors: the block mask built before the calls (empty otherwise).
  std::string block_mask_note;  // "built in 0.021 ms: 412 of 2080 tiles visited, 356 full"
  std::vector<float> out;    // [B, Hq, Tq, D], converted to float32
  std::vector<float> lse;    // [B, Hq, Tq]
  std::optional<Kernel> attn;  // the compiled kernel (always set by run_on_cuda)
  CudaTensors tensors;
};

// Rounds data.q, k, v to `dtype` in place first, so that a host reference computed from them
// afterwards sees exactly what the kernel saw. timed_calls = 0: one launch, no timing.
CudaRun run_on_cuda(const Program& program, AttentionData& data, const HostBindings& bindings, DType dtype, Math math,
                    std::optional<float> scale, int timed_calls);

// float32 host values <-> a device buffer of `dtype` (bf16 or fp16; fp8_e4m3 for upload_element)
// elements. upload_element rounds `x` to the element type in place (so the host copy is what the
// device holds).
DeviceBuffer upload_element(std::vector<float>& x, DType dtype);
std::vector<float> download_element(const DeviceBuffer& buffer, std::size_t count, DType dtype);

}  // namespace flexjit::tools

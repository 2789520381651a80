// `flexjit run` on a CUDA device through the public API: compile, upload, launch, time, download.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "tools/run_inputs.hpp"

namespace flexjit::tools {

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
};

// Rounds data.q, k, v to `dtype` in place first, so that a host reference computed from them
// afterwards sees exactly what the kernel saw. timed_calls = 0: one launch, no timing.
CudaRun run_on_cuda(const Program& program, AttentionData& data, const HostBindings& bindings, DType dtype, Math math,
                    std::optional<float> scale, int timed_calls);

}  // namespace flexjit::tools

// A cubin/PTX image loaded into one device's primary context, and the launch call that goes with
// it. Loading is per context, so one compiled artifact can own several of these (one per device).
#pragma once

#include "jit/cuda_driver.hpp"

#include <span>
#include <string>

namespace flexjit::jit {

class Module {
 public:
  // Loads `image` (a cubin, or NUL-terminated PTX) into the primary context of `device`.
  Module(std::span<const char> image, int device);
  ~Module();  // unloads; errors at process teardown are ignored
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Throws CudaError (CUDA_ERROR_NOT_FOUND) when the module has no kernel of that name.
  CUfunction function(const std::string& name) const;
  CUmodule handle() const noexcept { return module_; }
  CUcontext context() const noexcept { return context_; }
  int device() const noexcept { return device_; }

 private:
  CUmodule module_ = nullptr;
  CUcontext context_ = nullptr;
  int device_ = 0;
};

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;  // dynamic shared memory
  CUstream stream = nullptr;
};

// Kernels needing more than 48 KiB of dynamic shared memory must opt in once per function.
void set_max_dynamic_shared_memory(CUfunction function, int bytes);

// Launches `function` with `args` (pointers to each argument, as cuLaunchKernel wants), making
// `context` current for the call when it is not already.
void launch(CUcontext context, CUfunction function, const LaunchConfig& config, void** args);

}  // namespace flexjit::jit

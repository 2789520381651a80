// A compiled kernel's CUfunction in each CUDA context it is launched from. Kernels launched in a
// device's primary context (the usual case, PyTorch's too) share the artifact's module; a
// non-primary current context gets a module of its own, loaded there once. The dynamic shared
// memory attribute is raised once per function when the kernel needs more than 48 KB.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/artifact.hpp"
#include "jit/cuda_driver.hpp"

namespace flexjit::jit {

class ContextFunctions {
 public:
  ContextFunctions(std::shared_ptr<const Artifact> artifact, std::string entry, int shared_bytes);
  ~ContextFunctions();
  ContextFunctions(const ContextFunctions&) = delete;
  ContextFunctions& operator=(const ContextFunctions&) = delete;

  // The function in `context` (which belongs to `device`). Thread-safe. Needs the driver.
  CUfunction get(CUcontext context, int device);

 private:
  struct Entry {
    CUcontext context = nullptr;
    CUmodule own_module = nullptr;  // null: the artifact's module in the primary context
    CUfunction function = nullptr;
  };
  std::shared_ptr<const Artifact> artifact_;
  std::string entry_;
  int shared_bytes_;
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace flexjit::jit

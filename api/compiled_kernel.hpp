// A generated kernel with its compiled image, and each entry point's CUfunction per CUDA context
// (loaded on first launch). What a forward Kernel holds, and what its decode and backward
// kernels are once compiled. Internal to the library.
#pragma once

#include <memory>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "jit/memory_cache.hpp"
#include "jit/context_functions.hpp"

namespace flexjit::api {

class CompiledKernel {
 public:
  CompiledKernel(codegen::GeneratedKernel generated, jit::ArtifactPtr artifact);

  // The entry point's functions; throws InternalError when the kernel has no such entry.
  jit::ContextFunctions& function(codegen::EntryRole role) const;

  const codegen::GeneratedKernel generated;
  const jit::ArtifactPtr artifact;

 private:
  std::vector<std::unique_ptr<jit::ContextFunctions>> functions_;  // one per generated.entries
};

}  // namespace flexjit::api

#include "jit/module.hpp"

#include <fmt/format.h>

#include <optional>

namespace flexjit::jit {

Module::Module(std::span<const char> image, int device)
    : context_(primary_context(device)), device_(device) {
  ScopedContext scope(context_);
  check(driver().cuModuleLoadData(&module_, image.data()),
        fmt::format("cuModuleLoadData ({} bytes, device {})", image.size(), device));
}

Module::~Module() {
  if (module_ == nullptr) return;
  const DriverApi& api = driver();
  if (api.cuCtxPushCurrent(context_) == CUDA_SUCCESS) {
    api.cuModuleUnload(module_);
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
  }
}

CUfunction Module::function(const std::string& name) const {
  CUfunction fn = nullptr;
  check(driver().cuModuleGetFunction(&fn, module_, name.c_str()),
        fmt::format("cuModuleGetFunction('{}')", name));
  return fn;
}

void set_max_dynamic_shared_memory(CUfunction function, int bytes) {
  check(driver().cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

void launch(CUcontext context, CUfunction function, const LaunchConfig& c, void** args) {
  const DriverApi& api = driver();
  CUcontext current = nullptr;
  check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  std::optional<ScopedContext> scope;
  if (current != context) scope.emplace(context);
  check(api.cuLaunchKernel(function, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                           c.block[2], c.shared_bytes, c.stream, args, nullptr),
        "cuLaunchKernel");
}

}  // namespace flexjit::jit

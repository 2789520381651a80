#include "jit/context_functions.hpp"

#include <fmt/format.h>

#include "jit/module.hpp"

namespace flexjit::jit {

namespace {
constexpr int kDefaultSharedLimit = 48 * 1024;  // what a launch gets without opting in
}

ContextFunctions::ContextFunctions(std::shared_ptr<const Artifact> artifact, std::string entry, int shared_bytes)
    : artifact_(std::move(artifact)), entry_(std::move(entry)), shared_bytes_(shared_bytes) {}

ContextFunctions::~ContextFunctions() {
  if (!driver_available()) return;
  const DriverApi& api = driver();
  for (const Entry& e : entries_) {
    if (e.own_module == nullptr) continue;
    // The context may be gone already (its owner destroyed it): then so is the module.
    if (api.cuCtxPushCurrent(e.context) != CUDA_SUCCESS) continue;
    api.cuModuleUnload(e.own_module);
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
  }
}

CUfunction ContextFunctions::get(CUcontext context, int device) {
  std::lock_guard lock(mutex_);
  for (const Entry& e : entries_)
    if (e.context == context) return e.function;

  Entry e;
  e.context = context;
  ScopedContext scope(context);
  const std::string& symbol = artifact_->symbol(entry_);
  if (context == primary_context(device)) {
    e.function = artifact_->module(device).function(symbol);
  } else {
    check(driver().cuModuleLoadData(&e.own_module, artifact_->image().data()),
          fmt::format("cuModuleLoadData ({} into the current context)", entry_));
    CUresult r = driver().cuModuleGetFunction(&e.function, e.own_module, symbol.c_str());
    if (r != CUDA_SUCCESS) driver().cuModuleUnload(e.own_module);
    check(r, fmt::format("cuModuleGetFunction('{}')", symbol));
  }
  if (shared_bytes_ > kDefaultSharedLimit) set_max_dynamic_shared_memory(e.function, shared_bytes_);
  entries_.push_back(e);
  return e.function;
}

}  // namespace flexjit::jit

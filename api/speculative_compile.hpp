// A compile started before it is known to be needed: the kernel a spill would fall back to,
// compiled in a worker of its own beside the one that may spill, and stopped the moment that one
// proves spill-free. The forward's tile chain (api/forward_tile_choice) and the backward's family
// fallback (api/pass_kernels) use it, so that a program whose first choice spills waits for
// about one compile, not two. Internal to the library.
#pragma once

#include <atomic>
#include <future>

#include "jit/kernel_cache.hpp"

namespace flexjit::api {

// Cancelled (its worker stopped) unless taken.
class Speculation {
 public:
  Speculation(const jit::KernelCache& cache, const jit::CompileJob& job);
  ~Speculation();
  Speculation(const Speculation&) = delete;
  Speculation& operator=(const Speculation&) = delete;
  jit::CompileResult take();  // rethrows the compile's error

 private:
  std::atomic<bool> cancel_{false};
  std::future<jit::CompileResult> result_;
};

// A core is free for a second compile.
bool core_free_for_speculation();

}  // namespace flexjit::api

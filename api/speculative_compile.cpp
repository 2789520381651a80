#include "api/speculative_compile.hpp"

#include <thread>

#include "jit/compile_workers.hpp"

namespace flexjit::api {

Speculation::Speculation(const jit::KernelCache& cache, const jit::CompileJob& job)
    : result_(std::async(std::launch::async, [&cache, &job, this] { return cache.compile_uncached(job.request, &cancel_); })) {}

Speculation::~Speculation() {
  cancel_.store(true);
  if (result_.valid()) {
    try {
      result_.get();
    } catch (...) {  // cancelled, or an error nobody asked for
    }
  }
}

jit::CompileResult Speculation::take() { return result_.get(); }

bool core_free_for_speculation() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores >= 2 && static_cast<unsigned>(jit::compiles_running()) + 2 <= cores;
}

}  // namespace flexjit::api

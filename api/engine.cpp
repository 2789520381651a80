// Engine::compile: program -> generated CUDA -> cubin through the cache -> Kernel.
#include <fmt/format.h>

#include <cmath>

#include "flexjit/error.hpp"
#include "api/boundary.hpp"
#include "api/cpu_kernel.hpp"
#include "api/kernel_impl.hpp"
#include "jit/cache_directory.hpp"
#include "jit/compile_workers.hpp"
#include "api/forward_tile_choice.hpp"

namespace flexjit {
namespace {

double positive(double value, const char* what) {
  if (!(value > 0) || !std::isfinite(value))
    throw ArgumentError(fmt::format("EngineOptions::{} is {}; it must be a positive number", what, value));
  return value;
}

jit::KernelCacheOptions cache_options(const EngineOptions& o) {
  jit::KernelCacheOptions c;
  if (o.cache_dir) c.directory = *o.cache_dir;
  c.use_disk = o.disk_cache && jit::disk_cache_enabled_by_environment();
  if (o.compile_timeout_s || o.compile_memory_mb) {
    jit::CompileLimits limits = jit::compile_limits_from_environment();
    if (o.compile_timeout_s) limits.seconds = positive(*o.compile_timeout_s, "compile_timeout_s");
    if (o.compile_memory_mb)
      limits.memory_bytes = jit::mib_to_bytes(positive(*o.compile_memory_mb, "compile_memory_mb"));
    c.limits = limits;
  }
  return c;
}

}  // namespace

CompileSetup compile_setup() {
  const jit::CompileLimits limits = jit::compile_limits_from_environment();
  return {jit::compile_worker_file().string(), limits.seconds, static_cast<double>(limits.memory_bytes) / 1048576.0};
}

Engine::Engine() : Engine(EngineOptions{}) {}
Engine::Engine(EngineOptions options) : state_(std::make_shared<State>(cache_options(options))) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

Kernel Engine::compile(const Program& program, const CompileOptions& options) {
  try {
    if (!options.device.is_cuda()) return Kernel(api::cpu_kernel(program, options));
    return compile_cuda(program, options);
  } catch (...) {
    api::rethrow_as_flexjit_error(program.name());
  }
}

Kernel Engine::compile_cuda(const Program& program, const CompileOptions& options) {
  auto source = detail::ProgramAccess::shared(program);
  api::CompiledForward forward = api::compile_forward(program.name(), *source, options, state_->cache);
  return Kernel(std::make_shared<const Kernel::Impl>(source, std::move(forward.generated), std::move(forward.artifact),
                                                     options.dtype, state_));
}

EngineCounters Engine::counters() const {
  const jit::CacheCounters c = state_->cache.counters();
  return {c.compiles, c.memory_hits, c.disk_hits};
}

}  // namespace flexjit

// Engine::compile: program -> generated CUDA -> cubin through the cache -> Kernel.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "compiler/codegen_cuda.hpp"
#include "flexjit/error.hpp"
#include "runtime/api_convert.hpp"
#include "runtime/api_kernel_impl.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/driver_extras.hpp"
#include "runtime/generated_kernel_compile.hpp"

namespace flexjit {
namespace {

// What code generation assumes when there is no driver to ask: the GPU host's arch. The source
// can be read and compiled; a launch needs the driver anyway.
constexpr const char* kArchWithoutDriver = "sm_90a";

std::string default_arch() {
  if (!runtime::driver_available()) return kArchWithoutDriver;
  try {
    const int current = runtime::current_context_device();
    return runtime::device_arch(current >= 0 ? current : 0);
  } catch (const std::exception& e) {
    throw Error(fmt::format("cannot find the current device's architecture (pass CompileOptions::arch): {}", e.what()));
  }
}

runtime::KernelCacheOptions cache_options(const EngineOptions& o) {
  runtime::KernelCacheOptions c;
  if (o.cache_dir) c.directory = *o.cache_dir;
  const char* env = std::getenv("FLEXJIT_DISK_CACHE");
  c.use_disk = o.disk_cache && (env == nullptr || std::strcmp(env, "0") != 0);
  return c;
}

}  // namespace

Engine::Engine() : Engine(EngineOptions{}) {}
Engine::Engine(EngineOptions options) : state_(std::make_shared<State>(cache_options(options))) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

Kernel Engine::compile(const Program& program, const CompileOptions& options) {
  auto source = detail::ProgramAccess::shared(program);
  compiler::KernelSpec spec;
  spec.head_dim = options.head_dim;
  spec.dtype = runtime::element_type(options.dtype);
  spec.arch = options.arch.empty() ? default_arch() : options.arch;
  if (options.tile)
    spec.tile = compiler::TileRequest{options.tile->block_m, options.tile->block_n, options.tile->warps,
                                      options.tile->stages, options.tile->q_in_registers};
  compiler::GeneratedKernel generated;
  try {
    generated = compiler::generate_forward_kernel(source->ir, spec, &source->file);
  } catch (const std::invalid_argument& e) {
    throw Error(fmt::format("{}: {}", program.name(), e.what()));
  }
  runtime::ArtifactPtr artifact;
  try {
    artifact = runtime::compile_generated(generated, state_->cache);
  } catch (const runtime::CompileError& e) {
    throw Error(fmt::format("{}: NVRTC could not compile {}:\n{}", program.name(), generated.entry, e.what()));
  }
  return Kernel(std::make_shared<const Kernel::Impl>(source, std::move(generated), std::move(artifact), options.dtype));
}

EngineCounters Engine::counters() const {
  const runtime::CacheCounters c = state_->cache.counters();
  return {c.compiles, c.memory_hits, c.disk_hits};
}

}  // namespace flexjit

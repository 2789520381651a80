// Engine::compile: program -> generated CUDA -> cubin through the cache -> Kernel.
#include <fmt/format.h>

#include <cmath>

#include "flexjit/error.hpp"
#include "api/boundary.hpp"
#include "api/generate.hpp"
#include "api/cpu_kernel.hpp"
#include "api/kernel_impl.hpp"
#include "jit/cache_directory.hpp"
#include "jit/compile_workers.hpp"
#include "jit/ptxas_report.hpp"
#include "api/generated_kernel_compile.hpp"

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

// Whether ptxas spilled registers in the entry. A stack frame without spill stores (sinf's slow
// path, a local array) is the code's own: a smaller tile keeps it, so it is no reason to retry.
bool spills(const jit::Artifact& artifact, const std::string& entry) {
  const jit::PtxasReport report = jit::parse_ptxas_report(artifact.log());
  const jit::PtxasFunction* f = report.function(entry);
  return f != nullptr && f->spills_registers();
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
  codegen::GeneratedKernel generated = api::generate(*source, options);
  jit::ArtifactPtr artifact = api::compile_or_explain(program.name(), generated, state_->cache);
  // The table's tile spilled with these mods: the family's next tile instead, until one does not
  // or there is none (each compile is cached, so this costs the extra compiles once).
  while (!options.tile && generated.tile_if_spills && spills(*artifact, generated.entry())) {
    CompileOptions retry = options;
    const compiler::TileRequest& t = *generated.tile_if_spills;
    retry.tile = TileShape{t.block_m, t.block_n, t.warps, t.stages, t.q_in_registers, t.persistent};
    generated = api::generate(*source, retry);
    artifact = api::compile_or_explain(program.name(), generated, state_->cache);
  }
  return Kernel(
      std::make_shared<const Kernel::Impl>(source, std::move(generated), std::move(artifact), options.dtype, state_));
}

EngineCounters Engine::counters() const {
  const jit::CacheCounters c = state_->cache.counters();
  return {c.compiles, c.memory_hits, c.disk_hits};
}

}  // namespace flexjit

#include "api/forward_tile_choice.hpp"

#include <optional>

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/speculative_compile.hpp"
#include "jit/ptxas_report.hpp"

namespace flexjit::api {
namespace {

// Whether ptxas spilled registers in the entry. A stack frame without spill stores (sinf's slow
// path, a local array) is the code's own: a smaller tile keeps it, so it is no reason to retry.
bool spills(const jit::Artifact& artifact, const std::string& entry) {
  const jit::PtxasReport report = jit::parse_ptxas_report(artifact.log());
  const jit::PtxasFunction* f = report.function(entry);
  return f != nullptr && f->spills_registers();
}

compiler::KernelTarget with_tile(compiler::KernelTarget target, const compiler::TileRequest& t) {
  target.tile = t;
  return target;
}

}  // namespace

CompiledForward compile_forward(const std::string& program_name, const Program::Impl& program,
                                const CompileOptions& options, jit::KernelCache& cache) {
  const compiler::KernelTarget target = main_target(program, options);
  return compile_choosing_tile(program_name, program, target, generate(program, target), cache);
}

CompiledForward compile_choosing_tile(const std::string& program_name, const Program::Impl& program,
                                      const compiler::KernelTarget& target, codegen::GeneratedKernel first,
                                      jit::KernelCache& cache) {
  codegen::GeneratedKernel current = std::move(first);
  for (;;) {
    const jit::CompileJob job(compile_request(current), current.entry());
    if (target.tile || !current.tile_if_spills)
      return {current, compile_or_explain(program_name, current.entry(), [&] { return cache.get_or_compile(job); })};
    // The next tile is generated (and compiled ahead) only when the current one is not cached:
    // a cache hit, the usual case after the first process, costs no second generation.
    const compiler::KernelTarget next_target = with_tile(target, *current.tile_if_spills);
    std::optional<codegen::GeneratedKernel> next;
    std::optional<jit::CompileJob> next_job;
    std::optional<Speculation> ahead;
    if (core_free_for_speculation() && !cache.has(job.key)) {
      next = generate(program, next_target);
      next_job.emplace(compile_request(*next), next->entry());
      if (!cache.has(next_job->key)) ahead.emplace(cache, *next_job);
    }
    jit::ArtifactPtr artifact =
        compile_or_explain(program_name, current.entry(), [&] { return cache.get_or_compile(job); });
    if (!spills(*artifact, current.entry())) return {std::move(current), std::move(artifact)};
    // Spilled: the next tile, already compiling when it was started ahead (then it enters the
    // cache as if compiled there, and the next round finds it in memory).
    if (ahead)
      compile_or_explain(program_name, next->entry(),
                         [&] { return cache.get_or_compile(next_job->key, [&] { return ahead->take(); }); });
    current = next ? std::move(*next) : generate(program, next_target);
  }
}

}  // namespace flexjit::api

#include "api/pass_kernels.hpp"

#include <algorithm>
#include <optional>

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/speculative_compile.hpp"
#include "codegen/sm80_bwd/family.hpp"
#include "jit/ptxas_report.hpp"
#include "templates/sm80/bwd_tiles.cuh"

namespace flexjit::api {
namespace {

compiler::KernelTarget pass_target(const compiler::KernelTarget& forward_target, compiler::KernelPass pass) {
  compiler::KernelTarget target = forward_target;
  target.pass = pass;
  // CompileOptions::family names the forward's family, backward_family the backward's.
  target.family = pass == compiler::KernelPass::Backward ? forward_target.backward_family : "";
  target.tile.reset();    // ... and CompileOptions::tile its tile
  return target;
}

// Whether ptxas spilled more than `tolerated` bytes in a main entry (the pre- and post-passes are
// small).
bool spills(const jit::Artifact& artifact, const codegen::GeneratedKernel& g, int tolerated) {
  const jit::PtxasReport report = jit::parse_ptxas_report(artifact.log());
  for (const codegen::EntryPoint& e : g.entries) {
    if (e.role != codegen::EntryRole::main && e.role != codegen::EntryRole::grads) continue;
    const jit::PtxasFunction* f = report.function(e.name);
    if (f && std::max(f->spill_store_bytes, f->spill_load_bytes) > tolerated) return true;
  }
  return false;
}

}  // namespace

codegen::GeneratedKernel generate_pass(const Program::Impl& program, const compiler::KernelTarget& forward_target,
                                       compiler::KernelPass pass) {
  return generate(program, pass_target(forward_target, pass));
}

std::unique_ptr<CompiledKernel> compile_pass(const Program::Impl& program, const compiler::KernelTarget& forward_target,
                                             compiler::KernelPass pass, jit::KernelCache& cache) {
  codegen::GeneratedKernel generated = generate_pass(program, forward_target, pass);
  const bool backward = pass == compiler::KernelPass::Backward;
  compiler::KernelTarget target = forward_target;
  // The Hopper backward, chosen by itself (not named), whose mods make ptxas spill in its fixed
  // tile: the mma.sync family, whose tiles shrink to fit, runs those programs instead, where it
  // serves the target at all (not at head dim 256). When a core is free and neither is cached,
  // the fallback compiles beside it, stopped if unneeded.
  compiler::KernelTarget fallback_target = target;
  fallback_target.backward_family = "sm80_bwd";
  const bool may_fall_back =
      backward && generated.family == "sm90_bwd" && target.backward_family.empty() &&
      codegen::sm80_bwd::family().refusal(pass_target(fallback_target, pass), program.ir).empty();
  std::optional<codegen::GeneratedKernel> fallback;
  std::optional<jit::CompileJob> fallback_job;
  std::optional<Speculation> ahead;
  const jit::CompileJob job(compile_request(generated), generated.entry());
  if (may_fall_back && core_free_for_speculation() && !cache.has(job.key)) {
    fallback = generate_pass(program, fallback_target, pass);
    fallback_job.emplace(compile_request(*fallback), fallback->entry());
    if (!cache.has(fallback_job->key)) ahead.emplace(cache, *fallback_job);
  }
  jit::ArtifactPtr artifact =
      compile_or_explain(program.file.name(), generated.entry(), [&] { return cache.get_or_compile(job); });
  if (may_fall_back && spills(*artifact, generated, 0)) {
    target = fallback_target;
    generated = fallback ? std::move(*fallback) : generate_pass(program, target, pass);
    const auto take_ahead = [&] { return cache.get_or_compile(fallback_job->key, [&] { return ahead->take(); }); };
    artifact = ahead ? compile_or_explain(program.file.name(), generated.entry(), take_ahead)
                     : compile_or_explain(program.file.name(), generated, cache);
  }
  // The backward table's tile spilled with these mods: its tile with fewer query rows (each
  // compile is cached, so this costs the extra compile once).
  if (backward && generated.tile_if_spills && spills(*artifact, generated, flexjit::sm80::kBwdTolerableSpillBytes)) {
    compiler::KernelTarget retry = pass_target(target, pass);
    retry.tile = generated.tile_if_spills;
    generated = generate(program, retry);
    artifact = compile_or_explain(program.file.name(), generated, cache);
  }
  return std::make_unique<CompiledKernel>(std::move(generated), std::move(artifact));
}

}  // namespace flexjit::api

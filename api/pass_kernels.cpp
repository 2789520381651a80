#include "api/pass_kernels.hpp"

#include <algorithm>
#include <optional>

#include "api/forward_tile_choice.hpp"
#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/speculative_compile.hpp"
#include "codegen/families.hpp"
#include "jit/ptxas_report.hpp"
#include "templates/sm80/bwd_tiles.cuh"

namespace flexjit::api {
namespace {

compiler::KernelTarget pass_target(const compiler::KernelTarget& forward_target, compiler::KernelPass pass) {
  compiler::KernelTarget target = forward_target;
  target.pass = pass;
  // CompileOptions::family names the forward's family (or this pass's, where it names one of its
  // families: "decode_mla"), backward_family the backward's.
  const codegen::KernelFamily* named = codegen::find_family(forward_target.family);
  target.family = pass == compiler::KernelPass::Backward       ? forward_target.backward_family
                  : named != nullptr && named->pass() == pass ? forward_target.family
                                                                : "";
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

// The ordered Hopper backward's form to compile after `form` spills: the writer's at 24 producer
// registers, then at 32, then the consumers' order.
std::optional<compiler::OrderedDqForm> ordered_dq_form_if_spills(compiler::OrderedDqForm form) {
  using compiler::OrderedDqForm;
  switch (form) {
    case OrderedDqForm::Writer:
      return OrderedDqForm::WriterWideProducer;
    case OrderedDqForm::WriterWideProducer:
      return OrderedDqForm::Consumers;
    case OrderedDqForm::Consumers:
      return std::nullopt;
  }
  return std::nullopt;
}

// The target to compile instead when the Hopper family of a pass, chosen by itself (not named),
// makes ptxas spill with these mods in its fixed tile: the mma.sync family of the same pass, whose
// tiles are smaller, where it serves the target (sm80_bwd not at head dim 256, nor v of its own head
// dim). Nothing otherwise.
std::optional<compiler::KernelTarget> spill_fallback(const Program::Impl& program,
                                                     const compiler::KernelTarget& forward_target,
                                                     compiler::KernelPass pass, const std::string& family) {
  compiler::KernelTarget fallback = pass_target(forward_target, pass);
  if (pass == compiler::KernelPass::Backward && family == "sm90_bwd" && forward_target.backward_family.empty())
    fallback.family = "sm80_bwd";
  else if (pass == compiler::KernelPass::Chunk && family == "sm90_chunk")
    fallback.family = "sm80_chunk";
  else
    return std::nullopt;
  if (!codegen::family_refusal(*codegen::find_family(fallback.family), fallback, program.ir).empty())
    return std::nullopt;
  return fallback;
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
  compiler::KernelTarget target = pass_target(forward_target, pass);
  // Where the Hopper family may spill, the fallback compiles beside it when a core is free and
  // neither is cached, stopped if unneeded.
  const std::optional<compiler::KernelTarget> fallback_target =
      spill_fallback(program, forward_target, pass, generated.family);
  std::optional<codegen::GeneratedKernel> fallback;
  std::optional<jit::CompileJob> fallback_job;
  std::optional<Speculation> ahead;
  const jit::CompileJob job(compile_request(generated), generated.entry());
  if (fallback_target && core_free_for_speculation() && !cache.has(job.key)) {
    fallback = generate(program, *fallback_target);
    fallback_job.emplace(compile_request(*fallback), fallback->entry());
    if (!cache.has(fallback_job->key)) ahead.emplace(cache, *fallback_job);
  }
  jit::ArtifactPtr artifact;
  if (pass == compiler::KernelPass::Chunk) {
    // The chunk kernel follows its family's tile chain while ptxas spills, as Engine::compile does
    // for the forward (persistent -> one CTA per query tile -> fewer rows or keys).
    CompiledForward chosen = compile_choosing_tile(program.file.name(), program, target, std::move(generated), cache);
    generated = std::move(chosen.generated);
    artifact = std::move(chosen.artifact);
  } else {
    artifact = compile_or_explain(program.file.name(), generated.entry(), [&] { return cache.get_or_compile(job); });
  }
  // The deterministic Hopper kernel's dQ writer thread shares the producer warpgroup's few
  // registers with the walk over query tiles, which ptxas spills under masks whose q ranges have
  // two bounds (windows): there the next forms (compiler::OrderedDqForm), before any other family.
  while (target.ordered_dq && spills(*artifact, generated, 0)) {
    const std::optional<compiler::OrderedDqForm> next = ordered_dq_form_if_spills(target.ordered_dq_form);
    if (!next) break;
    target.ordered_dq_form = *next;
    codegen::GeneratedKernel retry = generate(program, target);
    if (retry.source == generated.source) continue;  // a kernel without the form (sm80_bwd, the wide form)
    generated = std::move(retry);
    artifact = compile_or_explain(program.file.name(), generated, cache);
  }
  if (fallback_target && spills(*artifact, generated, 0)) {
    target = *fallback_target;
    generated = fallback ? std::move(*fallback) : generate(program, target);
    const auto take_ahead = [&] { return cache.get_or_compile(fallback_job->key, [&] { return ahead->take(); }); };
    artifact = ahead ? compile_or_explain(program.file.name(), generated.entry(), take_ahead)
                     : compile_or_explain(program.file.name(), generated, cache);
  }
  // The backward table's tile spilled with these mods: its tile with fewer query rows (each
  // compile is cached, so this costs the extra compile once).
  if (backward && generated.tile_if_spills && spills(*artifact, generated, flexjit::sm80::kBwdTolerableSpillBytes)) {
    compiler::KernelTarget retry = target;
    retry.tile = generated.tile_if_spills;
    generated = generate(program, retry);
    artifact = compile_or_explain(program.file.name(), generated, cache);
  }
  return std::make_unique<CompiledKernel>(std::move(generated), std::move(artifact));
}

}  // namespace flexjit::api

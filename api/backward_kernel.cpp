#include "api/backward_kernel.hpp"

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"

#include <algorithm>

#include "jit/ptxas_report.hpp"
#include "templates/sm80/bwd_tiles.cuh"

namespace flexjit::api {

BackwardKernel::BackwardKernel(codegen::GeneratedKernel g, jit::ArtifactPtr a)
    : generated(std::move(g)), artifact(std::move(a)), prep(artifact, generated.prep_entry, 0),
      main(artifact, generated.entry, generated.shared_bytes), grads(artifact, generated.grads_entry, generated.shared_bytes),
      post(artifact, generated.post_entry, 0), q_tile_map(artifact, generated.tile_map_entry, 0) {}

codegen::GeneratedKernel generate_backward(const Program::Impl& program, const compiler::KernelTarget& forward_target) {
  compiler::KernelTarget target = forward_target;
  target.pass = compiler::KernelPass::Backward;
  target.family.clear();  // CompileOptions::family names the forward's family
  target.tile.reset();    // ... and CompileOptions::tile its tile
  return generate(program, target);
}

namespace {

// Whether ptxas spilled more than the family tolerates in a main entry (the pre- and post-passes
// are small).
bool spills_too_much(const jit::Artifact& artifact, const codegen::GeneratedKernel& g) {
  const jit::PtxasReport report = jit::parse_ptxas_report(artifact.log());
  for (const std::string& entry : {g.entry, g.grads_entry}) {
    const jit::PtxasFunction* f = entry.empty() ? nullptr : report.function(entry);
    if (f && std::max(f->spill_store_bytes, f->spill_load_bytes) > flexjit::sm80::kBwdTolerableSpillBytes) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<BackwardKernel> compile_backward(const Program::Impl& program,
                                                 const compiler::KernelTarget& forward_target, jit::KernelCache& cache) {
  codegen::GeneratedKernel generated = generate_backward(program, forward_target);
  jit::ArtifactPtr artifact = compile_or_explain(program.file.name(), generated, cache);
  // The table's tile spilled with these mods: its tile with fewer query rows (each compile is
  // cached, so this costs the extra compile once).
  if (generated.tile_if_spills && spills_too_much(*artifact, generated)) {
    compiler::KernelTarget retry = forward_target;
    retry.pass = compiler::KernelPass::Backward;
    retry.family.clear();
    retry.tile = generated.tile_if_spills;
    generated = generate(program, retry);
    artifact = compile_or_explain(program.file.name(), generated, cache);
  }
  return std::make_unique<BackwardKernel>(std::move(generated), std::move(artifact));
}

}  // namespace flexjit::api

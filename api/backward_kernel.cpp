#include "api/backward_kernel.hpp"

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"

namespace flexjit::api {

BackwardKernel::BackwardKernel(codegen::GeneratedKernel g, jit::ArtifactPtr a)
    : generated(std::move(g)), artifact(std::move(a)), prep(artifact, generated.prep_entry, 0),
      main(artifact, generated.entry, generated.shared_bytes), grads(artifact, generated.grads_entry, generated.shared_bytes),
      post(artifact, generated.post_entry, 0) {}

codegen::GeneratedKernel generate_backward(const Program::Impl& program, const compiler::KernelTarget& forward_target) {
  compiler::KernelTarget target = forward_target;
  target.pass = compiler::KernelPass::Backward;
  target.family.clear();  // CompileOptions::family names the forward's family
  target.tile.reset();    // ... and CompileOptions::tile its tile
  return generate(program, target);
}

std::unique_ptr<BackwardKernel> compile_backward(const Program::Impl& program,
                                                 const compiler::KernelTarget& forward_target, jit::KernelCache& cache) {
  codegen::GeneratedKernel generated = generate_backward(program, forward_target);
  jit::ArtifactPtr artifact = compile_or_explain(program.file.name(), generated, cache);
  return std::make_unique<BackwardKernel>(std::move(generated), std::move(artifact));
}

}  // namespace flexjit::api

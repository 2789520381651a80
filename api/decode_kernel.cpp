#include "api/decode_kernel.hpp"

#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"

namespace flexjit::api {

DecodeKernel::DecodeKernel(codegen::GeneratedKernel g, jit::ArtifactPtr a)
    : generated(std::move(g)), artifact(std::move(a)), main(artifact, generated.entry, generated.shared_bytes),
      combine(artifact, generated.combine_entry, 0) {}

codegen::GeneratedKernel generate_decode(const Program::Impl& program, const compiler::KernelTarget& forward_target) {
  compiler::KernelTarget target = forward_target;
  target.pass = compiler::KernelPass::Decode;
  target.family.clear();  // CompileOptions::family names the forward's family
  target.tile.reset();    // ... and CompileOptions::tile its tile
  return generate(program, target);
}

std::unique_ptr<DecodeKernel> compile_decode(const Program::Impl& program, const compiler::KernelTarget& forward_target,
                                             jit::KernelCache& cache) {
  codegen::GeneratedKernel generated = generate_decode(program, forward_target);
  jit::ArtifactPtr artifact = compile_or_explain(program.file.name(), generated, cache);
  return std::make_unique<DecodeKernel>(std::move(generated), std::move(artifact));
}

}  // namespace flexjit::api

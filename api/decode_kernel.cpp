#include "api/decode_kernel.hpp"

#include <fmt/format.h>

#include "api/generated_kernel_compile.hpp"
#include "codegen/families.hpp"
#include "flexjit/error.hpp"

namespace flexjit::api {

DecodeKernel::DecodeKernel(codegen::GeneratedKernel g, jit::ArtifactPtr a)
    : generated(std::move(g)), artifact(std::move(a)), main(artifact, generated.entry, generated.shared_bytes),
      combine(artifact, generated.combine_entry, 0) {}

codegen::GeneratedKernel generate_decode(const Program::Impl& program, const compiler::KernelTarget& forward_target) {
  compiler::KernelTarget target = forward_target;
  target.pass = compiler::KernelPass::Decode;
  target.family.clear();  // CompileOptions::family names the forward's family
  target.tile.reset();    // ... and CompileOptions::tile its tile
  try {
    return codegen::generate_kernel(program.ir, target, &program.file);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(fmt::format("{}: {}", program.file.name(), e.what()));
  }
}

std::unique_ptr<DecodeKernel> compile_decode(const Program::Impl& program, const compiler::KernelTarget& forward_target,
                                             jit::KernelCache& cache) {
  codegen::GeneratedKernel generated = generate_decode(program, forward_target);
  jit::ArtifactPtr artifact;
  try {
    artifact = compile_generated(generated, cache);
  } catch (const NvrtcError& e) {
    throw NvrtcError(fmt::format("{}: NVRTC could not compile {}:\n{}", program.file.name(), generated.entry, e.what()),
                     e.log());
  }
  return std::make_unique<DecodeKernel>(std::move(generated), std::move(artifact));
}

}  // namespace flexjit::api

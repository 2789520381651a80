// The decode kernel of a CUDA Kernel: generated and compiled on the first forward call that
// passes a KV cache (ForwardOptions::kv_lens), through the engine's cache, so that a program
// only ever used for prefill pays nothing for it. Internal to the library.
#pragma once

#include <memory>

#include "api/program_impl.hpp"
#include "codegen/generated_kernel.hpp"
#include "jit/context_functions.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit::api {

struct DecodeKernel {
  DecodeKernel(codegen::GeneratedKernel g, jit::ArtifactPtr a);
  codegen::GeneratedKernel generated;
  jit::ArtifactPtr artifact;
  mutable jit::ContextFunctions main;     // generated.entry
  mutable jit::ContextFunctions combine;  // generated.combine_entry
};

// The decode pass of `forward_target` (its head dim, dtype, arch and math mode) for the program.
// Throws what Engine::compile throws (UnsupportedError, NvrtcError naming the program).
codegen::GeneratedKernel generate_decode(const Program::Impl& program, const compiler::KernelTarget& forward_target);
std::unique_ptr<DecodeKernel> compile_decode(const Program::Impl& program, const compiler::KernelTarget& forward_target,
                                             jit::KernelCache& cache);

}  // namespace flexjit::api

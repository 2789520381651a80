// The backward kernels of a CUDA Kernel (codegen/sm80_bwd): generated and compiled on the first
// Kernel::backward call, through the engine's cache, so that a program only ever used for
// inference pays nothing for them. Internal to the library.
#pragma once

#include <memory>

#include "api/program_impl.hpp"
#include "codegen/generated_kernel.hpp"
#include "jit/context_functions.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit::api {

struct BackwardKernel {
  BackwardKernel(codegen::GeneratedKernel g, jit::ArtifactPtr a);
  codegen::GeneratedKernel generated;
  jit::ArtifactPtr artifact;
  mutable jit::ContextFunctions prep;   // generated.prep_entry
  mutable jit::ContextFunctions main;   // generated.entry
  mutable jit::ContextFunctions grads;  // generated.grads_entry (when there is one)
  mutable jit::ContextFunctions post;   // generated.post_entry
  mutable jit::ContextFunctions q_tile_map;  // generated.tile_map_entry (when there is one)
};

// The backward pass of `forward_target` (its head dim, dtype, arch and math mode) for the program.
// Throws what Engine::compile throws (UnsupportedError: a head dim the family does not serve, a
// mod the derivative pass cannot differentiate; NvrtcError naming the program).
codegen::GeneratedKernel generate_backward(const Program::Impl& program, const compiler::KernelTarget& forward_target);
std::unique_ptr<BackwardKernel> compile_backward(const Program::Impl& program,
                                                 const compiler::KernelTarget& forward_target, jit::KernelCache& cache);

}  // namespace flexjit::api

// The kernels of a CUDA Kernel's other passes: decode against a KV cache and the backward.
// Generated and compiled on the first call that needs them, through the engine's cache, so that
// a program only ever used for prefill or inference pays nothing for them. Internal to the
// library.
#pragma once

#include <memory>

#include "api/compiled_kernel.hpp"
#include "api/program_impl.hpp"
#include "codegen/generated_kernel.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit::api {

// The `pass` kernel of `forward_target` (its head dim, dtype, arch and math mode; the family and
// tile CompileOptions name are the forward's) for the program. Throws what Engine::compile throws
// (UnsupportedError: a head dim the family does not serve, a mod the derivative pass cannot
// differentiate; NvrtcError naming the program).
codegen::GeneratedKernel generate_pass(const Program::Impl& program, const compiler::KernelTarget& forward_target,
                                       compiler::KernelPass pass);
std::unique_ptr<CompiledKernel> compile_pass(const Program::Impl& program, const compiler::KernelTarget& forward_target,
                                             compiler::KernelPass pass, jit::KernelCache& cache);

}  // namespace flexjit::api

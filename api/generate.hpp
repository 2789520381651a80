// Engine::compile's first half, shared with generate_cuda_source: CompileOptions -> the kernel
// target -> plan, family, generated source (codegen/families.hpp).
#pragma once

#include "api/program_impl.hpp"
#include "codegen/families.hpp"
#include "flexjit/options.hpp"

namespace flexjit::api {

// The forward target CompileOptions ask for (the default arch when none is given).
compiler::KernelTarget forward_target(const CompileOptions& options);

// The target of a CUDA Kernel's main kernel: the forward's, or the decode pass's for a program with
// token lists (TokenIndices), whose every forward call runs the decode kernel (no prefill family
// serves them).
compiler::KernelTarget main_target(const Program::Impl& program, const CompileOptions& options);

// Throws flexjit::UnsupportedError naming the declaration's line when no CUDA kernel serves the
// pass for the program: the backward of token-level selection (cpu kernels only for now).
void refuse_unserved_pass(const Program::Impl& program, compiler::KernelPass pass);

// Throws flexjit::UnsupportedError, prefixed with the program's name, for a target no kernel
// family serves.
codegen::GeneratedKernel generate(const Program::Impl& program, const compiler::KernelTarget& target);
// The main kernel CompileOptions ask for: generate(program, main_target(program, options)).
codegen::GeneratedKernel generate(const Program::Impl& program, const CompileOptions& options);

}  // namespace flexjit::api

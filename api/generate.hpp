// Engine::compile's first half, shared with generate_cuda_source: CompileOptions -> the kernel
// target -> plan, family, generated source (codegen/families.hpp).
#pragma once

#include "api/program_impl.hpp"
#include "codegen/families.hpp"
#include "flexjit/options.hpp"

namespace flexjit::api {

// The forward target CompileOptions ask for (the default arch when none is given).
compiler::KernelTarget forward_target(const CompileOptions& options);

// Throws flexjit::UnsupportedError, prefixed with the program's name, for a target no kernel
// family serves.
codegen::GeneratedKernel generate(const Program::Impl& program, const compiler::KernelTarget& target);
// The forward kernel CompileOptions ask for: generate(program, forward_target(options)).
codegen::GeneratedKernel generate(const Program::Impl& program, const CompileOptions& options);

}  // namespace flexjit::api

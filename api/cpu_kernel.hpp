// Engine::compile with CompileOptions::device = Device::cpu(): a kernel that runs the program on
// the host back end (cpu/attention.hpp). Nothing is generated or compiled for the GPU; the LLVM
// back end compiles the mods on the first forward call (and caches them per program).
#pragma once

#include <memory>

#include "flexjit/kernel.hpp"
#include "flexjit/options.hpp"
#include "flexjit/program.hpp"

namespace flexjit::api {

// Checks the options against what the host back end supports (UnsupportedError / ArgumentError).
std::shared_ptr<const Kernel::Impl> cpu_kernel(const Program& program, const CompileOptions& options);

}  // namespace flexjit::api

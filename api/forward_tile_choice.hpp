// The forward kernel's tile, chosen by compiling: the family's first tile, then, while ptxas
// spills registers, the family's next (codegen::GeneratedKernel::tile_if_spills). When a core is
// free and neither is cached, the next tile compiles beside the current one in a worker of its
// own and is stopped the moment the current one proves spill-free, so a program whose first tile
// spills waits for about one compile, not two, and one that fits pays nothing but a core for a
// while. Internal to the library.
#pragma once

#include <string>

#include "api/program_impl.hpp"
#include "codegen/generated_kernel.hpp"
#include "flexjit/options.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit::api {

struct CompiledForward {
  codegen::GeneratedKernel generated;
  jit::ArtifactPtr artifact;
};

// A tile given in options.tile is compiled as given. Throws what Engine::compile throws.
CompiledForward compile_forward(const std::string& program_name, const Program::Impl& program,
                                const CompileOptions& options, jit::KernelCache& cache);

// The same for any pass whose family has a tile chain (the chunk pass too): `first` is
// generate(program, target); a tile in target.tile is compiled as given.
CompiledForward compile_choosing_tile(const std::string& program_name, const Program::Impl& program,
                                      const compiler::KernelTarget& target, codegen::GeneratedKernel first,
                                      jit::KernelCache& cache);

}  // namespace flexjit::api

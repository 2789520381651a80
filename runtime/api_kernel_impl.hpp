// What a flexjit::Kernel and a flexjit::Engine hold. Internal to the library.
#pragma once

#include <memory>

#include "compiler/codegen_cuda.hpp"
#include "flexjit/engine.hpp"
#include "flexjit/kernel.hpp"
#include "runtime/api_program_impl.hpp"
#include "runtime/context_functions.hpp"
#include "runtime/kernel_cache.hpp"

namespace flexjit {

struct Engine::State {
  explicit State(runtime::KernelCacheOptions options) : cache(std::move(options)) {}
  runtime::KernelCache cache;
};

struct Kernel::Impl {
  Impl(std::shared_ptr<const Program::Impl> p, compiler::GeneratedKernel g, runtime::ArtifactPtr a, DType d)
      : program(std::move(p)), generated(std::move(g)), artifact(a), dtype(d),
        functions(a, generated.entry, generated.tile.shared_bytes(generated.spec.head_dim)),
        tile_map_functions(std::move(a), generated.tile_map_entry, 0) {}

  std::shared_ptr<const Program::Impl> program;  // the bindings are checked against its declarations
  compiler::GeneratedKernel generated;
  runtime::ArtifactPtr artifact;
  DType dtype;
  mutable runtime::ContextFunctions functions;  // loaded per context on first launch
  mutable runtime::ContextFunctions tile_map_functions;  // the builder (unused when there is none)
};

}  // namespace flexjit

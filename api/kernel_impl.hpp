// What a flexjit::Kernel and a flexjit::Engine hold. Internal to the library.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "codegen/sm80_fwd/generate.hpp"
#include "flexjit/engine.hpp"
#include "flexjit/kernel.hpp"
#include "api/program_impl.hpp"
#include "jit/context_functions.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit {

struct Engine::State {
  explicit State(jit::KernelCacheOptions options) : cache(std::move(options)) {}
  jit::KernelCache cache;
};

struct Kernel::Impl {
  Impl(std::shared_ptr<const Program::Impl> p, codegen::GeneratedKernel g, jit::ArtifactPtr a, DType d)
      : program(std::move(p)), generated(std::move(g)), artifact(a), dtype(d),
        functions(a, generated.entry, generated.tile.shared_bytes(generated.spec.head_dim)),
        tile_map_functions(std::move(a), generated.tile_map_entry, 0) {}

  std::shared_ptr<const Program::Impl> program;  // the bindings are checked against its declarations
  codegen::GeneratedKernel generated;
  jit::ArtifactPtr artifact;
  DType dtype;
  mutable jit::ContextFunctions functions;  // loaded per context on first launch
  mutable jit::ContextFunctions tile_map_functions;  // the builder (unused when there is none)
  // Kernel::ptx(), compiled on first use.
  mutable std::mutex ptx_mutex;
  mutable std::string ptx;
};

}  // namespace flexjit

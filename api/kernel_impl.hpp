// What a flexjit::Kernel and a flexjit::Engine hold. Internal to the library.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "codegen/families.hpp"
#include "cpu/attention.hpp"
#include "flexjit/engine.hpp"
#include "flexjit/kernel.hpp"
#include "api/backward_kernel.hpp"
#include "api/decode_kernel.hpp"
#include "api/program_impl.hpp"
#include "jit/context_functions.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit {

struct Engine::State {
  explicit State(jit::KernelCacheOptions options) : cache(std::move(options)) {}
  jit::KernelCache cache;
};

struct Kernel::Impl {
  // A CUDA kernel: the generated source and its compiled image, and the engine whose cache
  // compiles its decode and backward kernels when they are first needed.
  Impl(std::shared_ptr<const Program::Impl> p, codegen::GeneratedKernel g, jit::ArtifactPtr a, DType d,
       std::shared_ptr<Engine::State> e)
      : program(std::move(p)), generated(std::move(g)), artifact(a), dtype(d), engine(std::move(e)),
        functions(a, generated.entry, generated.shared_bytes),
        tile_map_functions(std::move(a), generated.tile_map_entry, 0) {}

  // A cpu kernel: nothing generated or compiled.
  Impl(std::shared_ptr<const Program::Impl> p, std::string name, int head_dim, DType d, cpu::CpuBackend backend,
       std::string backend_note)
      : program(std::move(p)), dtype(d), device(Device::cpu()), cpu_name(std::move(name)), cpu_head_dim(head_dim),
        cpu_backend(backend), cpu_backend_note(std::move(backend_note)), functions(nullptr, "", 0),
        tile_map_functions(nullptr, "", 0) {}

  std::shared_ptr<const Program::Impl> program;  // the bindings are checked against its declarations
  codegen::GeneratedKernel generated;  // empty for a cpu kernel
  jit::ArtifactPtr artifact;  // null for a cpu kernel
  DType dtype;
  std::shared_ptr<Engine::State> engine;  // null for a cpu kernel
  Device device = Device::cuda();
  std::string cpu_name;  // cpu kernels: what messages call the kernel
  int cpu_head_dim = 0;
  cpu::CpuBackend cpu_backend = cpu::CpuBackend::Auto;  // cpu kernels: resolved (Llvm or Interpreter)
  std::string cpu_backend_note;  // cpu kernels: why automatic fell back to the interpreter
  mutable jit::ContextFunctions functions;  // loaded per context on first launch
  mutable jit::ContextFunctions tile_map_functions;  // the builder (unused when there is none)
  // Kernel::ptx(), compiled on first use.
  mutable std::mutex ptx_mutex;
  mutable std::string ptx;
  // The decode kernel (api/decode_kernel.hpp), compiled on the first call with a KV cache.
  const api::DecodeKernel& decode_kernel() const;
  mutable std::mutex decode_mutex;
  mutable std::unique_ptr<api::DecodeKernel> decode;
  // The backward kernels (api/backward_kernel.hpp), compiled on the first backward call.
  const api::BackwardKernel& backward_kernel() const;
  mutable std::mutex backward_mutex;
  mutable std::unique_ptr<api::BackwardKernel> backward;
};

}  // namespace flexjit

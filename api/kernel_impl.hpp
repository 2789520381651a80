// What a flexjit::Kernel and a flexjit::Engine hold. Internal to the library.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "codegen/families.hpp"
#include "cpu/attention.hpp"
#include "flexjit/engine.hpp"
#include "flexjit/kernel.hpp"
#include "api/compiled_kernel.hpp"
#include "api/pass_kernels.hpp"
#include "api/program_impl.hpp"
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
      : program(std::move(p)), cuda(std::make_unique<const api::CompiledKernel>(std::move(g), std::move(a))),
        dtype(d), engine(std::move(e)) {}

  // A cpu kernel: nothing generated or compiled.
  Impl(std::shared_ptr<const Program::Impl> p, std::string name, int head_dim, int head_dim_v, DType d,
       cpu::CpuBackend backend, std::string backend_note)
      : program(std::move(p)), dtype(d), device(Device::cpu()), cpu_name(std::move(name)), cpu_head_dim(head_dim),
        cpu_head_dim_v(head_dim_v), cpu_backend(backend), cpu_backend_note(std::move(backend_note)) {}

  std::shared_ptr<const Program::Impl> program;  // the bindings are checked against its declarations
  std::unique_ptr<const api::CompiledKernel> cuda;  // the forward kernel; null for a cpu kernel
  DType dtype;
  std::shared_ptr<Engine::State> engine;  // null for a cpu kernel
  Device device = Device::cuda();
  std::string cpu_name;  // cpu kernels: what messages call the kernel
  int cpu_head_dim = 0;
  int cpu_head_dim_v = 0;  // of v and out
  cpu::CpuBackend cpu_backend = cpu::CpuBackend::Auto;  // cpu kernels: resolved (Llvm or Interpreter)
  std::string cpu_backend_note;  // cpu kernels: why automatic fell back to the interpreter
  // Kernel::ptx() of each pass, compiled on first use.
  mutable std::mutex ptx_mutex;
  mutable std::array<std::string, 4> ptx;
  // A CUDA kernel's pass, compiled first where it is not yet (errors name `kernel_name`).
  const api::CompiledKernel& compiled(Kernel::Pass pass, const std::string& kernel_name) const;
  // `positions`: for a call with nonzero offsets (ForwardOptions::q_offset, kv_offset), the kernel
  // whose mods add them (compiler::KernelTarget::positions; the same tile and Params), generated
  // and compiled on the first such call. Calls without run kernels that spend nothing on them.
  const codegen::GeneratedKernel& forward_source(bool positions) const;
  const api::CompiledKernel& forward_kernel(bool positions) const;
  // The decode kernel, compiled on the first call with a KV cache, and the backward kernels,
  // compiled on the first backward call (api/pass_kernels.hpp).
  const api::CompiledKernel& decode_kernel(bool positions = false) const;
  // The chunk kernel (chunked prefill against a KV cache), compiled on the first such call.
  const api::CompiledKernel& chunk_kernel(bool positions = false) const;
  // A pass kernel of the forward's target (with `positions`) in `slot`, compiled under `mutex` on
  // first use.
  const api::CompiledKernel& pass_kernel(compiler::KernelPass pass, bool positions, std::mutex& mutex,
                                         std::unique_ptr<const api::CompiledKernel>& slot) const;
  // The backward module a call runs, each compiled on first use: with the kernel that scatters into
  // captured tensors' gradients (score_grads) or without, adding dQ in kv tile order
  // (deterministic) or not.
  const api::CompiledKernel& backward_kernel(bool score_grads = false, bool deterministic = false,
                                             bool positions = false) const;
  mutable std::mutex positioned_mutex, decode_mutex, chunk_mutex, backward_mutex;
  mutable std::unique_ptr<const codegen::GeneratedKernel> positioned_source;
  mutable std::unique_ptr<const api::CompiledKernel> positioned_forward;
  mutable std::array<std::unique_ptr<const api::CompiledKernel>, 2> decode;  // by positions
  mutable std::array<std::unique_ptr<const api::CompiledKernel>, 2> chunk;   // by positions
  // by 4 * positions + 2 * score_grads + deterministic
  mutable std::array<std::unique_ptr<const api::CompiledKernel>, 8> backward;
};

}  // namespace flexjit

#include "api/cpu_kernel.hpp"

#include <fmt/format.h>

#include <cctype>
#include <utility>

#include "api/kernel_impl.hpp"
#include "cpu/llvm_backend.hpp"
#include "dsl/quoted.hpp"
#include "flexjit/error.hpp"

namespace flexjit::api {
namespace {

cpu::CpuBackend internal_backend(CpuBackend b) {
  switch (b) {
    case CpuBackend::automatic: return cpu::CpuBackend::Auto;
    case CpuBackend::llvm: return cpu::CpuBackend::Llvm;
    case CpuBackend::interpreter: return cpu::CpuBackend::Interpreter;
  }
  return cpu::CpuBackend::Auto;
}

// "flexjit_cpu_causal_d64_f32": the CUDA entry names' form, so messages read alike.
std::string cpu_kernel_name(const std::string& program_stem, int head_dim, DType dtype) {
  std::string stem;
  for (char c : program_stem) stem += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return fmt::format("flexjit_cpu_{}_d{}_{}", stem.empty() ? "program" : stem, head_dim, dtype_name(dtype));
}

}  // namespace

std::shared_ptr<const Kernel::Impl> cpu_kernel(const Program& program, const CompileOptions& options) {
  // fp8_e4m3: q, k and v in FP8 with bf16 out, the forward only (api/fp8_passes.hpp).
  if (options.dtype != DType::f32 && options.dtype != DType::bf16 && options.dtype != DType::fp16 &&
      options.dtype != DType::fp8_e4m3)
    throw UnsupportedError(fmt::format("dtype {} is not supported for q, k, v and out: cpu kernels take f32, bf16, "
                                       "fp16 or fp8_e4m3",
                                       dtype_name(options.dtype)));
  if (options.head_dim < 1)
    throw UnsupportedError(fmt::format("head dim {} is not supported: it must be at least 1", options.head_dim));
  if (options.head_dim_v < 0)
    throw UnsupportedError(fmt::format("head dim {} of v is not supported: it must be at least 1 (0: head_dim)",
                                       options.head_dim_v));
  if (!options.arch.empty())
    throw ArgumentError(fmt::format("arch {} is for CUDA kernels; leave CompileOptions::arch empty with Device::cpu()",
                                    dsl::quoted(options.arch)));
  if (options.tile)
    throw ArgumentError("a tile is for CUDA kernels; leave CompileOptions::tile empty with Device::cpu()");
  for (const auto& [field, family] : {std::pair{"family", &options.family}, {"backward_family", &options.backward_family}})
    if (!family->empty())
      throw ArgumentError(fmt::format("kernel family {} is for CUDA kernels; leave CompileOptions::{} empty with "
                                      "Device::cpu()", dsl::quoted(*family), field));
  if (options.cpu_backend == CpuBackend::llvm && !cpu::llvm_backend_available())
    throw UnsupportedError("the LLVM cpu back end is not built into this flexjit (use CpuBackend::interpreter or automatic)");
  const cpu::CpuBackend backend = cpu::resolve_backend(internal_backend(options.cpu_backend));
  std::string note;
  if (options.cpu_backend == CpuBackend::automatic && backend == cpu::CpuBackend::Interpreter)
    note = fmt::format("the LLVM cpu back end is not available ({}); running the mods in the interpreter",
                       cpu::llvm_backend_unavailable_reason());
  return std::make_shared<const Kernel::Impl>(detail::ProgramAccess::shared(program),
                                              cpu_kernel_name(detail::ProgramAccess::impl(program).ir.name,
                                                              options.head_dim, options.dtype),
                                              options.head_dim, options.head_dim_v > 0 ? options.head_dim_v : options.head_dim,
                                              options.dtype, backend, std::move(note));
}

}  // namespace flexjit::api

namespace flexjit {

const char* cpu_backend_name(CpuBackend b) noexcept {
  switch (b) {
    case CpuBackend::automatic: return "automatic";
    case CpuBackend::llvm: return "llvm";
    case CpuBackend::interpreter: return "interpreter";
  }
  return "automatic";
}

}  // namespace flexjit

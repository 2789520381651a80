#include "api/generate.hpp"

#include <fmt/format.h>

#include "api/convert.hpp"
#include "api/default_arch.hpp"
#include "flexjit/error.hpp"

namespace flexjit::api {

compiler::KernelTarget forward_target(const CompileOptions& options) {
  if (options.head_dim_v < 0)
    throw UnsupportedError(fmt::format("head dim {} of v is not supported: it must be at least 1 (0: head_dim)",
                                       options.head_dim_v));
  compiler::KernelTarget target;
  target.head_dim = options.head_dim;
  if (options.head_dim_v != options.head_dim) target.head_dim_v = options.head_dim_v;
  target.dtype = element_type(options.dtype);
  target.arch = options.arch.empty() ? default_arch() : options.arch;
  target.family = options.family;
  target.backward_family = options.backward_family;
  target.math = math_mode(options.math);
  if (options.tile)
    target.tile = compiler::TileRequest{options.tile->block_m, options.tile->block_n, options.tile->warps,
                                        options.tile->stages, options.tile->q_in_registers, options.tile->persistent};
  return target;
}

codegen::GeneratedKernel generate(const Program::Impl& program, const compiler::KernelTarget& target) {
  if (const auto& t = program.ir.token_indices)
    throw UnsupportedError(fmt::format("{}:{}: token-level selection ('{}: TokenIndices') runs on cpu kernels only for "
                                       "now (Device::cpu()): no CUDA kernel family serves it yet",
                                       program.file.name(), t->pos.line, t->name));
  try {
    return codegen::generate_kernel(program.ir, target, &program.file);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(fmt::format("{}: {}", program.file.name(), e.what()));
  }
}

codegen::GeneratedKernel generate(const Program::Impl& program, const CompileOptions& options) {
  return generate(program, forward_target(options));
}

}  // namespace flexjit::api

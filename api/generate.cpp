#include "api/generate.hpp"

#include <fmt/format.h>

#include "api/convert.hpp"
#include "api/default_arch.hpp"
#include "flexjit/error.hpp"

namespace flexjit::api {

compiler::KernelTarget forward_target(const CompileOptions& options) {
  compiler::KernelTarget target;
  target.head_dim = options.head_dim;
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

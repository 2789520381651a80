#include "api/generate.hpp"

#include <fmt/format.h>

#include "api/convert.hpp"
#include "api/default_arch.hpp"
#include "codegen/families.hpp"
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

namespace {

bool served(const compiler::KernelTarget& target, const Program::Impl& program) {
  try {
    codegen::select_family(target, program.ir);
    return true;
  } catch (const UnsupportedError&) {
    return false;
  }
}

compiler::KernelTarget decode_pass(compiler::KernelTarget target) {
  target.pass = compiler::KernelPass::Decode;
  return target;
}

}  // namespace

compiler::KernelTarget main_target(const Program::Impl& program, const CompileOptions& options) {
  compiler::KernelTarget target = forward_target(options);
  // A family named for another pass keeps its pass, so that its refusal says why.
  const auto& t = program.ir.token_indices;
  // The decode kernel is the main one where it runs every call: token lists (unless the options
  // name another family, whose refusal then says why), and a decode family of v's own head dim
  // (decode_mla, sm90_mla) where named or where no forward family takes the head dims (MLA's
  // absorbed 576 / 512).
  const codegen::KernelFamily* named = codegen::find_family(target.family);
  const bool named_mla = named != nullptr && named->pass() == compiler::KernelPass::Decode &&
                         named->serves_value_head_dim();
  if ((t && (target.family.empty() || target.family == "decode")) || named_mla ||
      (target.family.empty() && target.dv() != target.head_dim && !served(target, program) &&
       served(decode_pass(target), program)))
    target.pass = compiler::KernelPass::Decode;
  return target;
}

void refuse_unserved_pass(const Program::Impl& program, compiler::KernelPass pass) {
  if (const auto& t = program.ir.token_indices; t && pass == compiler::KernelPass::Backward)
    throw UnsupportedError(fmt::format("{}:{}: the backward of token-level selection ('{}: TokenIndices') runs on cpu "
                                       "kernels only for now (Device::cpu()): no CUDA kernel family serves it yet",
                                       program.file.name(), t->pos.line, t->name));
}

codegen::GeneratedKernel generate(const Program::Impl& program, const compiler::KernelTarget& target) {
  refuse_unserved_pass(program, target.pass);
  try {
    return codegen::generate_kernel(program.ir, target, &program.file);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(fmt::format("{}: {}", program.file.name(), e.what()));
  }
}

codegen::GeneratedKernel generate(const Program::Impl& program, const CompileOptions& options) {
  return generate(program, main_target(program, options));
}

}  // namespace flexjit::api

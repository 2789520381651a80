#include "codegen/mma_sync_target.hpp"

#include <fmt/format.h>

#include "dsl/quoted.hpp"

namespace flexjit::codegen {

std::string mma_sync_refusal(const compiler::KernelTarget& t) {
  if (t.head_dim < 16 || t.head_dim > 256 || t.head_dim % 16 != 0)
    return fmt::format("head dim {} is not supported: it must be a multiple of 16 between 16 and 256", t.head_dim);
  const std::optional<int> arch = compiler::arch_number(t.arch);
  if (!arch)
    return fmt::format("architecture {} is not of the form sm_XY (e.g. sm_80, sm_90a)", dsl::quoted(t.arch));
  if (*arch < 80)
    return fmt::format("architecture {} is not supported: flexjit kernels need sm_80 or newer "
                       "(cp.async, bf16 tensor cores)", dsl::quoted(t.arch));
  return "";
}

}  // namespace flexjit::codegen

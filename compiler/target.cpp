#include "compiler/target.hpp"

namespace flexjit::compiler {

const char* element_name(ElementType t) { return t == ElementType::BF16 ? "bf16" : "fp16"; }
const char* element_cuda_type(ElementType t) { return t == ElementType::BF16 ? "flexjit::bf16_t" : "flexjit::fp16_t"; }

const char* pass_name(KernelPass p) {
  switch (p) {
    case KernelPass::Forward: return "forward";
    case KernelPass::Decode: return "decode";
    case KernelPass::Backward: return "backward";
    case KernelPass::Chunk: return "chunk";
  }
  return "?";
}

const char* math_mode_name(MathMode m) { return m == MathMode::Fast ? "fast" : "exact"; }

std::optional<int> arch_number(const std::string& arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0) return std::nullopt;
  std::size_t end = arch.size();
  if (arch.back() == 'a') --end;
  const std::size_t digits = end - 3;
  if (digits < 2 || digits > 3) return std::nullopt;
  int n = 0;
  for (std::size_t i = 3; i < end; ++i) {
    if (arch[i] < '0' || arch[i] > '9') return std::nullopt;
    n = n * 10 + (arch[i] - '0');
  }
  return n;
}

}  // namespace flexjit::compiler

#include "compiler/target.hpp"

namespace flexjit::compiler {

const char* element_name(ElementType t) {
  switch (t) {
    case ElementType::BF16: return "bf16";
    case ElementType::FP16: return "fp16";
    case ElementType::FP8_E4M3: return "fp8_e4m3";
  }
  return "?";
}

const char* element_cuda_type(ElementType t) {
  switch (t) {
    case ElementType::BF16: return "flexjit::bf16_t";
    case ElementType::FP16: return "flexjit::fp16_t";
    case ElementType::FP8_E4M3: return "flexjit::e4m3_t";
  }
  return "?";
}

int element_bytes(ElementType t) { return t == ElementType::FP8_E4M3 ? 1 : 2; }

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

// Comparisons per score in 32 bits (codegen/cuda_expr.cpp): a position expression compared with a
// 64-bit value (a runtime scalar, a loaded int) clamps that value once into the 32-bit range that
// keeps every comparison's answer, instead of widening the position per score. tests/codegen/
// ops_test.cpp checks the clamp against the interpreter; the GPU tests run the kernels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/generated_kernel_compile.hpp"
#include "codegen/families.hpp"
#include "compiler/pipeline.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace flexjit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The body of the generated Mods::mask.
std::string mask_source(const std::string& text) {
  dsl::SourceFile file("p.py", text);
  const auto k = codegen::generate_kernel(compiler::build_ir(file), {128, compiler::ElementType::BF16, "sm_90a"}, &file);
  const std::size_t at = k.source.find("static bool mask(");
  EXPECT_NE(at, std::string::npos);
  return k.source.substr(at, k.source.find("\n  }", at) - at);
}

TEST(Int32Compare, AWindowScalarIsClampedOnceNotWidenedPerScore) {
  const std::string m = mask_source(
      "window: int\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return (q_idx >= kv_idx) & (q_idx - kv_idx < window)\n");
  // q_idx - kv_idx lies in [-(2^31 - 2), 2^31 - 2], so window clamps into one past each end.
  EXPECT_THAT(m, HasSubstr("((static_cast<int>(v_q_idx) - static_cast<int>(v_kv_idx)) < "
                           "flexjit::ops::clamp32(p.s_window, (-2147483647), 2147483647))"));
  EXPECT_THAT(m, Not(HasSubstr("static_cast<long long>((static_cast<int>(v_q_idx) -")));
}

TEST(Int32Compare, EitherSideAndLoadedValues) {
  const std::string m = mask_source(
      "prefix: Tensor[int64, 1]\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return (prefix[b] > kv_idx) | (q_idx >= kv_idx)\n");
  EXPECT_THAT(m, HasSubstr("(flexjit::ops::clamp32("));
  EXPECT_THAT(m, HasSubstr(", (-1), 2147483647) > static_cast<int>(v_kv_idx))"));
}

TEST(Int32Compare, NotWhereTheClampBoundsDoNotFit) {
  // q_idx * 2 reaches 2^32 - 4: it does not fit in 32 bits, so the comparison stays 64-bit.
  const std::string m = mask_source(
      "limit: int\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return q_idx * 2 + kv_idx < limit\n");
  EXPECT_THAT(m, Not(HasSubstr("clamp32")));
  EXPECT_THAT(m, HasSubstr("< p.s_limit)"));
}

TEST(Int32Compare, TheClampedKernelCompiles) {
  dsl::SourceFile file("p.py",
                       "window: int\n"
                       "SINKS = 4\n"
                       "def mask_mod(b, h, q_idx, kv_idx):\n"
                       "    return (q_idx >= kv_idx) & ((q_idx - kv_idx < window) | (kv_idx < SINKS))\n");
  const auto k = codegen::generate_kernel(compiler::build_ir(file), {64, compiler::ElementType::BF16, "sm_80"}, &file);
  EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
}

}  // namespace
}  // namespace flexjit

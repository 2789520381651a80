// CompileOptions::math in the generated source (codegen/float_math.cpp). exact: every float
// operation through an _rn intrinsic and the math library, as the CPU computes. fast: plain
// operators, a constant divisor as a multiplication by its reciprocal, the approximate functions.
// mask_mod stays exact in both.
#include <gtest/gtest.h>

#include "api/generated_kernel_compile.hpp"
#include "codegen/families.hpp"
#include "compiler/pipeline.hpp"

using namespace flexjit;
using compiler::MathMode;

namespace {

// Every function the two modes spell differently, a constant divisor in each mod, a per-CTA value
// (rsqrt of h) and a sink.
const char* const kProgram =
    "CAP = 50.0\n"
    "def score_mod(score, b, h, q_idx, kv_idx):\n"
    "    s = CAP * torch.tanh(score / CAP) + torch.exp(score) - torch.log(2.0 + kv_idx)\n"
    "    return s + torch.sigmoid(score) * torch.exp2(score / 3.0) - torch.log2(1.0 + q_idx) + torch.rsqrt(1.0 + h)\n"
    "def mask_mod(b, h, q_idx, kv_idx):\n"
    "    return q_idx / 3.0 >= kv_idx * 0.25\n"
    "def sink(b, h):\n"
    "    return h / 7.0\n";

codegen::GeneratedKernel generate(const std::string& text, MathMode math) {
  dsl::SourceFile file("math.py", text);
  compiler::KernelTarget target{64, compiler::ElementType::BF16, "sm_90a"};
  target.math = math;
  return codegen::generate_kernel(compiler::build_ir(file), target, &file);
}

// The text of one member function of the generated Mods, from its signature to its closing brace.
std::string member(const std::string& source, const std::string& signature) {
  const std::size_t begin = source.find(signature);
  if (begin == std::string::npos) return "";
  return source.substr(begin, source.find("\n  }\n", begin) - begin);
}

std::string score_of(const std::string& source) { return member(source, "__device__ static float score("); }
std::string mask_of(const std::string& source) { return member(source, "__device__ static bool mask("); }
std::string sink_of(const std::string& source) { return member(source, "__device__ static float sink("); }
std::string cta_of(const std::string& source) { return member(source, "__device__ static Cta cta("); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MathMode, ExactRoundsEachOperationAsTheCpuDoes) {
  const std::string source = generate(kProgram, MathMode::Exact).source;
  const std::string score = score_of(source);
  ASSERT_FALSE(score.empty()) << source;
  for (const char* part : {"__fdiv_rn(", "__fmul_rn(", "__fadd_rn(", "__fsub_rn(", "tanhf(", "expf(", "logf(",
                           "exp2f(", "log2f(", "flexjit::ops::sigmoid("})
    EXPECT_TRUE(has(score, part)) << part << " missing in\n" << score;
  EXPECT_TRUE(has(cta_of(source), "flexjit::ops::rsqrt(")) << source;
  EXPECT_TRUE(has(sink_of(source), "__fdiv_rn(")) << source;
  EXPECT_FALSE(has(source, "fast_")) << source;
  EXPECT_TRUE(has(source, "\n// Math exact:")) << source;
}

// sin, cos and tan are the ops' wrappers in both modes (their wide arguments reduced out of line,
// templates/common/dsl_ops.cuh), never the C functions inline; erf is the C function.
TEST(MathMode, TrigFunctionsReduceWideArgumentsOutOfLine) {
  const char* const program =
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return torch.sin(score) + torch.cos(score) * torch.tan(score * 0.01) + torch.erf(score)\n";
  for (MathMode math : {MathMode::Exact, MathMode::Fast}) {
    const std::string score = score_of(generate(program, math).source);
    for (const char* part : {"flexjit::ops::sin(", "flexjit::ops::cos(", "flexjit::ops::tan(", "erff("})
      EXPECT_TRUE(has(score, part)) << part << " missing in\n" << score;
    for (const char* inline_call : {"sinf(", "cosf(", "tanf("})
      EXPECT_FALSE(has(score, inline_call)) << inline_call << " inline in\n" << score;
  }
}

TEST(MathMode, FastUsesOperatorsAndTheApproximations) {
  const std::string source = generate(kProgram, MathMode::Fast).source;
  const std::string score = score_of(source);
  ASSERT_FALSE(score.empty()) << source;
  EXPECT_FALSE(has(score, "_rn(")) << score;
  for (const char* part : {"flexjit::fast_tanh(", "flexjit::fast_exp(", "flexjit::fast_log(", "flexjit::fast_exp2(",
                           "flexjit::fast_log2(", "flexjit::fast_sigmoid("})
    EXPECT_TRUE(has(score, part)) << part << " missing in\n" << score;
  // Constant divisors become multiplications by the reciprocal: 1 / 50, 1 / 3 and 1 / 7 as floats.
  EXPECT_TRUE(has(score, "(v_score * 0.02f)")) << score;
  EXPECT_TRUE(has(score, "(v_score * 0.33333334f)")) << score;
  EXPECT_TRUE(has(sink_of(source), " * 0.14285715f)")) << source;
  EXPECT_TRUE(has(cta_of(source), "rsqrtf(")) << source;
  EXPECT_TRUE(has(source, "\n// Math fast:")) << source;
}

TEST(MathMode, MaskStaysExactInFastMode) {
  const std::string source = generate(kProgram, MathMode::Fast).source;
  const std::string mask = mask_of(source);
  EXPECT_TRUE(has(mask, "__fdiv_rn(")) << mask;
  EXPECT_TRUE(has(mask, "__fmul_rn(")) << mask;
}

TEST(MathMode, DivisorWithoutAFiniteReciprocalStaysADivision) {
  // 1 / 1e-39 overflows a float: multiplying by it would turn 0 / 1e-39 into NaN.
  const std::string text = "def score_mod(score, b, h, q_idx, kv_idx):\n    return score / 1e-39\n";
  const std::string score = score_of(generate(text, MathMode::Fast).source);
  EXPECT_TRUE(has(score, "(v_score / 1e-39f)")) << score;
}

// What NVRTC makes of the two: tanh.approx only in the fast kernel.
TEST(MathMode, FastPtxUsesTheApproximateInstructions) {
  auto ptx = [](MathMode math) {
    const jit::CompileResult r = jit::compile(api::compile_request(generate(kProgram, math), jit::OutputKind::ptx));
    return std::string(r.image.begin(), r.image.end());
  };
  const std::string fast = ptx(MathMode::Fast), exact = ptx(MathMode::Exact);
  EXPECT_TRUE(has(fast, "tanh.approx.f32"));
  EXPECT_TRUE(has(fast, "rsqrt.approx"));
  EXPECT_FALSE(has(exact, "tanh.approx.f32"));
  EXPECT_TRUE(has(exact, "div.rn.f32"));
}

}  // namespace

namespace {

// tanh_approx is the user asking for the hardware instruction (a soft-cap written as a custom op
// around tanh.approx.f32): it is that instruction in both modes, where torch.tanh is it only in fast.
TEST(MathMode, TanhApproxIsTheInstructionInBothModes) {
  const char* const program =
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return 30.0 * tanh_approx(score / 30.0)\n";
  for (MathMode math : {MathMode::Fast, MathMode::Exact}) {
    const jit::CompileResult r = jit::compile(api::compile_request(generate(program, math), jit::OutputKind::ptx));
    EXPECT_TRUE(has(std::string(r.image.begin(), r.image.end()), "tanh.approx.f32")) << compiler::math_mode_name(math);
  }
}

}  // namespace

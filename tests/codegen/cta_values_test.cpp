// Per-CTA values (compiler/hoist.hpp): which subexpressions of the mods are computed once per CTA
// instead of once per score, and how the generated kernel spells them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codegen/families.hpp"
#include "compiler/hoist.hpp"
#include "compiler/pipeline.hpp"
#include "api/generated_kernel_compile.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace flexjit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ir::Program program_of(const std::string& text) { return compiler::build_ir(dsl::SourceFile("p.py", text)); }

std::vector<compiler::CtaValue> values_of(const std::string& text) {
  const ir::Program p = program_of(text);
  std::vector<compiler::CtaValue> out;
  if (p.mask_mod) compiler::find_cta_values(p.mask_mod->body, out);
  if (p.score_mod) compiler::find_cta_values(p.score_mod->body, out);
  return out;
}

TEST(CtaValues, AlibiSlopeFromTheHeadIsHoisted) {
  const auto v = values_of(
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return score - 2.0 ** (-8.0 * (h + 1) / 16) * (q_idx - kv_idx)\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "hz0");
  EXPECT_EQ(v[0].expr.type(), ir::Type::Float);
}

TEST(CtaValues, LoadsIndexedByBatchOrHeadAreHoisted) {
  const auto v = values_of(
      "slopes: Tensor[float32, 1]\n"
      "prefix: Tensor[int32, 1]\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return score + slopes[h] * (kv_idx - q_idx)\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return (kv_idx < prefix[b]) | (q_idx >= kv_idx)\n");
  EXPECT_EQ(v.size(), 2u);
}

TEST(CtaValues, NothingThatDependsOnPositionsOrTheScore) {
  EXPECT_TRUE(values_of("doc: Tensor[int32, 1]\n"
                        "def mask_mod(b, h, q_idx, kv_idx):\n"
                        "    return doc[q_idx] == doc[kv_idx]\n")
                  .empty());
  EXPECT_TRUE(values_of("def score_mod(score, b, h, q_idx, kv_idx):\n"
                        "    return 50.0 * tanh(score / 50.0)\n")
                  .empty());
  // Cheap arithmetic on b and h stays where it is (a register for the whole kernel is not worth it).
  EXPECT_TRUE(values_of("def score_mod(score, b, h, q_idx, kv_idx):\n"
                        "    return score + (h + 1) * 0.5\n")
                  .empty());
}

TEST(CtaValues, GuardedLoadsStayGuarded) {
  // `and` evaluates its right side only when the left is true: the load may be out of range
  // otherwise, so it is not computed ahead for the whole CTA.
  EXPECT_TRUE(values_of("limit: Tensor[int32, 1]\n"
                        "n: int\n"
                        "def mask_mod(b, h, q_idx, kv_idx):\n"
                        "    return (h < n) and (kv_idx < limit[h])\n")
                  .empty());
  // `&` evaluates both sides.
  EXPECT_EQ(values_of("limit: Tensor[int32, 1]\n"
                      "n: int\n"
                      "def mask_mod(b, h, q_idx, kv_idx):\n"
                      "    return (h < n) & (kv_idx < limit[h])\n")
                .size(),
            1u);
}

TEST(CtaValues, GeneratedKernelComputesThemOnce) {
  const ir::Program p = program_of(
      "slopes: Tensor[float32, 1]\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return score + slopes[h] * (kv_idx - q_idx)\n");
  const std::string src = codegen::generate_kernel(p, {}).source;
  EXPECT_THAT(src, HasSubstr("struct Cta {"));
  EXPECT_THAT(src, HasSubstr("__device__ static Cta cta(const Params& p, int b_, int h_) {"));
  EXPECT_THAT(src, HasSubstr("__device__ static float score(const Cta& c, float score_,"));
  const std::string score = src.substr(src.find("static float score("));
  EXPECT_THAT(score.substr(0, score.find("\n  }")), HasSubstr("c.hz0"));
  EXPECT_THAT(score.substr(0, score.find("\n  }")), Not(HasSubstr("__ldg")));
}

TEST(CtaValues, LetsOfBothModsDoNotCollide) {
  // Each mod's shared subexpressions become Lets named t0, t1, ... per mod; hoisted from both
  // mods into one cta(), they must still compile.
  const std::string text =
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return (q_idx >= kv_idx) and ((h * 5 // 2) * (h * 5 // 2) > 3)\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return score + (float((h * 7 // 3) * (h * 7 // 3)) if q_idx >= kv_idx else 0.0)\n";
  dsl::SourceFile file("p.py", text);
  const auto k = codegen::generate_kernel(compiler::build_ir(file), {64, compiler::ElementType::BF16, "sm_80"}, &file);
  // Both guarded arms are hoisted whole, each with its own Let t0.
  EXPECT_THAT(k.source, HasSubstr("hz1_ = [&]() {"));
  std::string cta = k.source.substr(k.source.find("static Cta cta("));
  cta = cta.substr(0, cta.find("\n  }"));
  int lets = 0;
  for (auto at = cta.find("const long long l_t0 ="); at != std::string::npos; at = cta.find("const long long l_t0 =", at + 1))
    ++lets;
  EXPECT_EQ(lets, 2);
  EXPECT_NO_THROW(jit::compile(api::compile_request(k)));
}

// A score mod whose loads are all per-CTA values may run on masked scores (Mods::kScoreAnywhere,
// branch-free logits); one that reads a tensor per score must not: its index may be in range only
// where the mask keeps the score.
TEST(CtaValues, ScoreAnywhereOnlyWithoutPerScoreLoads) {
  auto source = [](const std::string& text) { return codegen::generate_kernel(program_of(text), {}).source; };
  const std::string mask = "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n";
  EXPECT_THAT(source("slopes: Tensor[float32, 1]\n"
                     "def score_mod(score, b, h, q_idx, kv_idx):\n"
                     "    return score + slopes[h] * (kv_idx - q_idx)\n" + mask),
              HasSubstr("static constexpr bool kScoreAnywhere = true;"));
  EXPECT_THAT(source("def score_mod(score, b, h, q_idx, kv_idx):\n"
                     "    return 50.0 * tanh(score / 50.0)\n" + mask),
              HasSubstr("static constexpr bool kScoreAnywhere = true;"));
  EXPECT_THAT(source("bias: Tensor[float32, 1]\n"
                     "def score_mod(score, b, h, q_idx, kv_idx):\n"
                     "    return score + bias[q_idx - kv_idx]\n" + mask),
              Not(HasSubstr("kScoreAnywhere")));
  // No score mod: nothing to say.
  EXPECT_THAT(source(mask), Not(HasSubstr("kScoreAnywhere")));
}

TEST(CtaValues, NoneNoCta) {
  const ir::Program p = program_of("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n");
  const std::string src = codegen::generate_kernel(p, {}).source;
  EXPECT_THAT(src, Not(HasSubstr("struct Cta")));
  EXPECT_THAT(src, HasSubstr("__device__ static bool mask(const Params& p,"));
}

}  // namespace
}  // namespace flexjit

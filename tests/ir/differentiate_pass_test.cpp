// What ir::differentiate returns, apart from its values: the constants it folds, the loads it
// lists (and those it must not), guards, errors, and its cost on a shared DAG.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "compiler/pipeline.hpp"
#include "dsl/source.hpp"
#include "flexjit/error.hpp"
#include "ir/differentiate.hpp"
#include "ir/internal_error.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"

namespace {

namespace ir = flexjit::ir;

ir::Program compile(const std::string& text) {
  return flexjit::compiler::build_ir(flexjit::dsl::SourceFile("t.py", text));
}

ir::ModDerivatives score_derivatives(const std::string& text) { return ir::differentiate(*compile(text).score_mod); }

float eval(const ir::Expr& e, ir::Env env, std::int64_t h, std::int64_t q, std::int64_t kv, float score) {
  env.h = h;
  env.q_idx = q;
  env.kv_idx = kv;
  env.score = score;
  return ir::evaluate(e, env).as_float();
}

TEST(Differentiate, AffineScoreModFoldsToAConstant) {
  const ir::ModDerivatives d = score_derivatives("def score_mod(score, b, h, q_idx, kv_idx):\n    return score * 2.0 + 1.0\n");
  const ir::FloatImm* c = d.d_score.as<ir::FloatImm>();
  ASSERT_TRUE(c) << ir::to_string(d.d_score);
  EXPECT_EQ(c->value, 2.0f);
  EXPECT_TRUE(d.loads.empty());
}

TEST(Differentiate, ABodyWithoutTheScoreHasAZeroScoreDerivative) {
  const ir::ModDerivatives d = score_derivatives(
      "slopes: Tensor[float32, 1]\ndef score_mod(score, b, h, q_idx, kv_idx):\n    return slopes[h] * (kv_idx - q_idx)\n");
  const ir::FloatImm* c = d.d_score.as<ir::FloatImm>();
  ASSERT_TRUE(c) << ir::to_string(d.d_score);
  EXPECT_EQ(c->value, 0.0f);
  ASSERT_EQ(d.loads.size(), 1u);
  EXPECT_EQ(d.loads[0].tensor, "slopes");
  EXPECT_EQ(d.loads[0].pos.line, 3);
  ASSERT_EQ(d.loads[0].indices.size(), 1u);
  EXPECT_EQ(ir::to_string(d.loads[0].indices[0]), "h");
  EXPECT_EQ(eval(d.loads[0].derivative, {}, 1, 2, 7, 0.0f), 5.0f);
}

TEST(Differentiate, IntegerCapturesAndConditionsHaveNoDerivative) {
  const ir::ModDerivatives d = score_derivatives(R"(
doc: Tensor[int32, 1]
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return where(w[q_idx] > 0.0, score, score + float(doc[kv_idx]))
)");
  EXPECT_TRUE(d.loads.empty()) << "w is read only by a condition, doc is an int tensor";
  const float w[2] = {1.0f, -1.0f};
  const std::int32_t doc[2] = {3, 4};
  ir::Env env;
  env.tensors["w"] = {ir::DType::Float32, {2}, {}, w};
  env.tensors["doc"] = {ir::DType::Int32, {2}, {}, doc};
  for (int q = 0; q < 2; ++q) EXPECT_EQ(eval(d.d_score, env, 0, q, 1, 0.25f), 1.0f) << "either branch";
}

TEST(Differentiate, GuardedLoadIsNotEvaluatedWhereTheGuardFails) {
  const ir::ModDerivatives d = score_derivatives(R"(
w: Tensor[float32, 1]
n: int
def score_mod(score, b, h, q_idx, kv_idx):
    return where(kv_idx < n, w[kv_idx] * score, score)
)");
  ASSERT_EQ(d.loads.size(), 1u);
  const float w[4] = {0.5f, -2.0f, 3.0f, 4.0f};
  ir::Env env;
  env.scalars["n"] = ir::Value::integer(4);
  env.tensors["w"] = {ir::DType::Float32, {4}, {}, w};
  env.kv_idx = 9;  // w[9] is out of range: the interpreter throws if it is read
  env.score = 1.5f;
  EXPECT_FALSE(ir::evaluate(d.loads[0].reached, env).as_bool());
  EXPECT_EQ(ir::evaluate(d.loads[0].derivative, env).as_float(), 0.0f);
  EXPECT_EQ(ir::evaluate(d.d_score, env).as_float(), 1.0f);
  env.kv_idx = 1;
  EXPECT_TRUE(ir::evaluate(d.loads[0].reached, env).as_bool());
  EXPECT_EQ(ir::evaluate(d.loads[0].derivative, env).as_float(), 1.5f);
  EXPECT_EQ(ir::evaluate(d.d_score, env).as_float(), -2.0f);
}

TEST(Differentiate, AVaryingExponentIsRefusedWithItsLine) {
  try {
    score_derivatives("def score_mod(score, b, h, q_idx, kv_idx):\n    x = score * 0.5\n    return (x * x + 1.0) ** x\n");
    FAIL() << "expected UnsupportedError";
  } catch (const flexjit::UnsupportedError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("score_mod: cannot differentiate 'x ** y' with respect to the exponent"), std::string::npos) << m;
    EXPECT_NE(m.find("(line 3, column"), std::string::npos) << m;
  }
}

TEST(Differentiate, AMaskHasNoDerivative) {
  const ir::Program p = compile("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n");
  EXPECT_THROW(ir::differentiate(*p.mask_mod), ir::InternalError);
}

std::string repeated(const std::string& header, const std::string& statement, int n) {
  std::string text = header + "def score_mod(score, b, h, q_idx, kv_idx):\n    x = score\n";
  for (int i = 0; i < n; ++i) text += "    " + statement + "\n";
  return text + "    return x\n";
}

double milliseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// 60 statements x = x * x + x unfold to a tree of 3^60 nodes: only a pass linear in the shared
// DAG finishes. d x_{k+1} / d x_k = 2 x_k + 1; from x_0 in (-1, 0) every x_k stays there.
TEST(Differentiate, SixtyStatementsOfXTimesXPlusXTakeMilliseconds) {
  const ir::Program p = compile(repeated("", "x = x * x + x", 60));
  const auto t0 = std::chrono::steady_clock::now();
  const ir::ModDerivatives d = ir::differentiate(*p.score_mod);
  const double ms = milliseconds_since(t0);
  std::printf("60 x = x * x + x: differentiated in %.2f ms\n", ms);
  EXPECT_LT(ms, 1000.0);

  const float s = -0.5f;
  double x = s, dx = 1;
  for (int i = 0; i < 60; ++i) {
    dx *= 2 * x + 1;
    x = static_cast<double>(static_cast<float>(static_cast<float>(x * x) + static_cast<float>(x)));
  }
  const float got = eval(d.d_score, {}, 0, 0, 0, s);
  EXPECT_NEAR(got, dx, 1e-4 * std::fabs(dx)) << "the derivative of the chain";
}

TEST(Differentiate, SixtyStatementsWithALoadEachTakeMilliseconds) {
  const ir::Program p = compile(repeated("w: Tensor[float32, 1]\n", "x = x * w[h] + torch.tanh(x) * w[q_idx]", 60));
  const auto t0 = std::chrono::steady_clock::now();
  const ir::ModDerivatives d = ir::differentiate(*p.score_mod);
  const double ms = milliseconds_since(t0);
  std::printf("60 statements with two loads each: %zu load sites differentiated in %.2f ms\n", d.loads.size(), ms);
  EXPECT_LT(ms, 1000.0);
  EXPECT_GE(d.loads.size(), 2u);
}

}  // namespace

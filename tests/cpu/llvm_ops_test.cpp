// Every operation of the IR, one at a time, against the interpreter over tables of edge cases:
// all 65536 half and bfloat16 patterns, integer extremes for floor division, modulo, shifts and
// powers, signed zeros and NaN for min / max, the float -> int saturation boundary, and each
// libm intrinsic over tens of thousands of float bit patterns. Bit-exact (any NaN == any NaN).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/args.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "cpu/llvm_backend.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using ir::BinaryOp;
using ir::DType;
using ir::Expr;
using ir::Type;

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Expr scalar(const char* n, Type t) { return ir::Var::make(n, t, ir::VarKind::Scalar); }

ir::Program two_operand_decls() {
  ir::Program p;
  p.scalars = {{"n", Type::Int, {}}, {"m", Type::Int, {}}, {"x", Type::Float, {}}, {"y", Type::Float, {}}};
  return p;
}

// Evaluates every expression at every env with both back ends; returns the number of checks.
int expect_agreement(const ir::Program& decls, const std::vector<Expr>& exprs, const std::vector<ir::Env>& envs) {
  cpu::CompiledExprs compiled(decls, exprs);
  int checks = 0;
  for (const ir::Env& env : envs) {
    cpu::CpuBinding bound(decls, env);
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      const ir::Value want = ir::evaluate(exprs[i], env);
      const ir::Value got = compiled.evaluate(i, bound, env);
      EXPECT_TRUE(ir::identical(got, want))
          << ir::to_string(exprs[i]) << ": llvm " << got << ", interpreter " << want << " (n=" << env.scalars.at("n")
          << " m=" << env.scalars.at("m") << " x=" << env.scalars.at("x") << " y=" << env.scalars.at("y")
          << " score=" << ir::Value::real(env.score) << ")";
      if (!ir::identical(got, want)) return checks;  // one report per table is enough
      ++checks;
    }
  }
  return checks;
}

ir::Env two_operands(std::int64_t n, std::int64_t m, float x, float y, float score = 0.0f) {
  ir::Env env;
  env.scalars["n"] = ir::Value::integer(n);
  env.scalars["m"] = ir::Value::integer(m);
  env.scalars["x"] = ir::Value::real(x);
  env.scalars["y"] = ir::Value::real(y);
  env.score = score;
  return env;
}

TEST(LlvmOps, HalfAndBfloat16AllPatterns) {
  SKIP_WITHOUT_LLVM();
  ir::Program decls;
  decls.captures = {{"h", DType::Float16, 1, {}}, {"bf", DType::BFloat16, 1, {}}};
  std::vector<std::uint16_t> bits(65536);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<std::uint16_t>(i);
  const Expr kv = ir::Var::make(ir::kParamKv, Type::Int, ir::VarKind::Param);
  const std::vector<Expr> exprs = {ir::Load::make("h", DType::Float16, {kv}), ir::Load::make("bf", DType::BFloat16, {kv})};
  ir::Env env;
  env.tensors["h"] = {DType::Float16, {65536}, {}, bits.data()};
  env.tensors["bf"] = {DType::BFloat16, {65536}, {}, bits.data()};
  cpu::CompiledExprs compiled(decls, exprs);
  cpu::CpuBinding bound(decls, env);
  for (std::int64_t i = 0; i < 65536; ++i) {
    env.kv_idx = i;
    for (std::size_t e = 0; e < exprs.size(); ++e)
      ASSERT_TRUE(ir::identical(compiled.evaluate(e, bound, env), ir::evaluate(exprs[e], env)))
          << (e ? "bfloat16" : "half") << " bits " << i;
  }
}

TEST(LlvmOps, IntegerEdges) {
  SKIP_WITHOUT_LLVM();
  const std::vector<std::int64_t> values = {0,  1,  -1, 2,  -2, 3,  -3, 7,    -7,       63,       64,   -63, -64,
                                            65, 100, -100, 1 << 20, kMin, kMax, kMin + 1, kMax - 1, 1LL << 62, -(1LL << 62)};
  const Expr n = scalar("n", Type::Int), m = scalar("m", Type::Int);
  std::vector<Expr> exprs;
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::FloorDiv, BinaryOp::Mod, BinaryOp::Pow,
                      BinaryOp::Min, BinaryOp::Max, BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::Shl,
                      BinaryOp::Shr})
    exprs.push_back(ir::Binary::make(op, n, m));
  for (ir::CompareOp op : {ir::CompareOp::LT, ir::CompareOp::LE, ir::CompareOp::GT, ir::CompareOp::GE,
                           ir::CompareOp::EQ, ir::CompareOp::NE})
    exprs.push_back(ir::Compare::make(op, n, m));
  exprs.push_back(ir::Unary::make(ir::UnaryOp::Neg, n));
  exprs.push_back(ir::Unary::make(ir::UnaryOp::BitNot, n));
  exprs.push_back(ir::Call::make(ir::Intrinsic::Abs, {n}));
  exprs.push_back(ir::Cast::make(Type::Float, n));
  exprs.push_back(ir::Cast::make(Type::Bool, n));
  std::vector<ir::Env> envs;
  for (std::int64_t a : values)
    for (std::int64_t b : values) envs.push_back(two_operands(a, b, 0, 0));
  EXPECT_EQ(expect_agreement(two_operand_decls(), exprs, envs), static_cast<int>(envs.size() * exprs.size()));
}

TEST(LlvmOps, FloatEdges) {
  SKIP_WITHOUT_LLVM();
  std::vector<float> values = {0.0f,  -0.0f,  1.0f,         -1.0f,    0.5f,   -0.5f,  2.0f,    3.0f,   -3.0f,
                               7.25f, -7.25f, kInf,         -kInf,    kNaN,   1e-45f, -1e-45f, 1e-38f, 3.4e38f,
                               -3.4e38f, 0x1p63f, -0x1p63f, 0x1.fffffep62f, 16777217.0f, 1e10f, -1e10f};
  const Expr x = scalar("x", Type::Float), y = scalar("y", Type::Float);
  std::vector<Expr> exprs;
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::FloorDiv, BinaryOp::Mod,
                      BinaryOp::Pow, BinaryOp::Min, BinaryOp::Max})
    exprs.push_back(ir::Binary::make(op, x, y));
  for (ir::CompareOp op : {ir::CompareOp::LT, ir::CompareOp::LE, ir::CompareOp::GT, ir::CompareOp::GE,
                           ir::CompareOp::EQ, ir::CompareOp::NE})
    exprs.push_back(ir::Compare::make(op, x, y));
  exprs.push_back(ir::Unary::make(ir::UnaryOp::Neg, x));
  exprs.push_back(ir::Cast::make(Type::Int, x));
  exprs.push_back(ir::Cast::make(Type::Bool, x));
  exprs.push_back(ir::Call::make(ir::Intrinsic::FloorToInt, {x}));
  exprs.push_back(ir::Call::make(ir::Intrinsic::CeilToInt, {x}));
  std::vector<ir::Env> envs;
  for (float a : values)
    for (float b : values) envs.push_back(two_operands(0, 0, a, b));
  EXPECT_EQ(expect_agreement(two_operand_decls(), exprs, envs), static_cast<int>(envs.size() * exprs.size()));
}

TEST(LlvmOps, IntrinsicsOverManyBitPatterns) {
  SKIP_WITHOUT_LLVM();
  const Expr s = ir::Var::make(ir::kParamScore, Type::Float, ir::VarKind::Param);
  std::vector<Expr> exprs;
  for (ir::Intrinsic fn : {ir::Intrinsic::Exp, ir::Intrinsic::Exp2, ir::Intrinsic::Log, ir::Intrinsic::Log2,
                           ir::Intrinsic::Log1p, ir::Intrinsic::Sqrt, ir::Intrinsic::Rsqrt, ir::Intrinsic::Tanh,
                           ir::Intrinsic::Sigmoid, ir::Intrinsic::Sin, ir::Intrinsic::Cos, ir::Intrinsic::Floor,
                           ir::Intrinsic::Ceil, ir::Intrinsic::Abs, ir::Intrinsic::Tan, ir::Intrinsic::Erf,
                           ir::Intrinsic::TanhApprox})
    exprs.push_back(ir::Call::make(fn, {s}));
  std::mt19937_64 rng(7);
  std::vector<ir::Env> envs;
  for (int i = 0; i < 20000; ++i) {
    // Half uniform bit patterns (every exponent), half values in [-30, 30] where the functions bend.
    const float v = i % 2 ? std::bit_cast<float>(static_cast<std::uint32_t>(rng()))
                          : std::uniform_real_distribution<float>(-30, 30)(rng);
    envs.push_back(two_operands(0, 0, 0, 0, v));
  }
  EXPECT_EQ(expect_agreement(two_operand_decls(), exprs, envs), static_cast<int>(envs.size() * exprs.size()));
}

// The same functions of constants: the optimiser must not fold them with its own (double
// precision) evaluation, which can round differently from libm's float functions.
TEST(LlvmOps, IntrinsicsOfConstantsAreNotFoldedDifferently) {
  SKIP_WITHOUT_LLVM();
  std::mt19937_64 rng(8);
  std::vector<Expr> exprs;
  for (int i = 0; i < 300; ++i) {
    const float v = i % 2 ? std::bit_cast<float>(static_cast<std::uint32_t>(rng()))
                          : std::uniform_real_distribution<float>(-30, 30)(rng);
    for (ir::Intrinsic fn : {ir::Intrinsic::Exp, ir::Intrinsic::Exp2, ir::Intrinsic::Log, ir::Intrinsic::Log2,
                             ir::Intrinsic::Log1p, ir::Intrinsic::Tanh, ir::Intrinsic::Sigmoid, ir::Intrinsic::Sin,
                             ir::Intrinsic::Cos, ir::Intrinsic::Tan, ir::Intrinsic::Erf})
      exprs.push_back(ir::Call::make(fn, {ir::FloatImm::make(v)}));
    exprs.push_back(ir::Binary::make(BinaryOp::Pow, ir::FloatImm::make(v), ir::FloatImm::make(std::uniform_real_distribution<float>(-4, 4)(rng))));
  }
  EXPECT_EQ(expect_agreement(two_operand_decls(), exprs, {two_operands(0, 0, 0, 0)}), static_cast<int>(exprs.size()));
}

}  // namespace

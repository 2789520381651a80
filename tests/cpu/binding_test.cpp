// CpuBinding: what must be bound, the errors that name what is wrong, and out-of-range loads
// reported (once) instead of crashing.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "cpu/args.hpp"
#include "cpu/llvm_backend.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using ir::DType;
using ir::Type;

ir::Expr kv() { return ir::Var::make(ir::kParamKv, Type::Int, ir::VarKind::Param); }
ir::Expr q() { return ir::Var::make(ir::kParamQ, Type::Int, ir::VarKind::Param); }

// mask: doc[q] == doc[kv] && q - kv < window; `unused` and `spare` are declared, never read.
ir::Program doc_window() {
  ir::Program p;
  p.name = "doc_window";
  p.captures = {{"doc", DType::Int32, 1, {}}, {"spare", DType::Float32, 2, {}}};
  p.scalars = {{"window", Type::Int, {}}, {"unused", Type::Float, {}}};
  ir::Expr same = ir::Compare::make(ir::CompareOp::EQ, ir::Load::make("doc", DType::Int32, {q()}),
                                    ir::Load::make("doc", DType::Int32, {kv()}));
  ir::Expr near = ir::Compare::make(ir::CompareOp::LT, ir::Binary::make(ir::BinaryOp::Sub, q(), kv()),
                                    ir::Var::make("window", Type::Int, ir::VarKind::Scalar));
  p.mask_mod = ir::Mod{ir::ModKind::Mask, {}, ir::Binary::make(ir::BinaryOp::And, same, near), {}};
  return p;
}

std::string error_of(const ir::Program& p, const ir::Env& env) {
  try {
    cpu::CpuBinding b(p, env);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

struct DocEnv {
  std::int32_t doc[4] = {0, 0, 1, 1};
  ir::Env env;
  DocEnv() {
    env.scalars["window"] = ir::Value::integer(2);
    env.tensors["doc"] = {DType::Int32, {4}, {}, doc};
  }
};

TEST(CpuBinding, UnusedDeclarationsMayStayUnbound) {
  DocEnv d;
  EXPECT_EQ(error_of(doc_window(), d.env), "");
}

TEST(CpuBinding, ErrorsNameTheDeclaration) {
  const ir::Program p = doc_window();
  {
    DocEnv d;
    d.env.scalars.erase("window");
    EXPECT_NE(error_of(p, d.env).find("scalar 'window' is not bound"), std::string::npos);
  }
  {
    DocEnv d;
    d.env.scalars["window"] = ir::Value::real(2.0f);
    EXPECT_NE(error_of(p, d.env).find("scalar 'window' is bound to a float value but declared int"), std::string::npos);
  }
  {
    DocEnv d;
    d.env.tensors.erase("doc");
    EXPECT_NE(error_of(p, d.env).find("tensor 'doc' is not bound"), std::string::npos);
  }
  {
    DocEnv d;
    d.env.tensors["doc"].dtype = DType::Int64;
    EXPECT_NE(error_of(p, d.env).find("tensor 'doc' is bound with dtype int64 but declared int32"), std::string::npos);
  }
  {
    DocEnv d;
    d.env.tensors["doc"].shape = {2, 2};
    EXPECT_NE(error_of(p, d.env).find("tensor 'doc' is bound with rank 2 but declared rank 1"), std::string::npos);
  }
}

TEST(CpuBinding, OutOfRangeLoadIsReportedOnceLikeTheInterpreter) {
  SKIP_WITHOUT_LLVM();
  const ir::Program p = doc_window();
  DocEnv d;
  cpu::CompiledMods mods(p);
  cpu::CpuBinding bound(p, d.env);
  EXPECT_TRUE(mods.mask(bound, 0, 0, 3, 2));
  EXPECT_FALSE(mods.mask(bound, 0, 0, 3, 1));
  EXPECT_THROW(ir::eval_mask(p, d.env, 0, 0, 4, 3), std::runtime_error);
  try {
    mods.mask(bound, 0, 0, 4, 3);
    FAIL() << "no error for doc[4] of a 4-element tensor";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range for tensor 'doc'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(mods.mask(bound, 0, 0, 3, 3));  // reported once, then cleared

  // A row records the fault instead of throwing; check() reports it.
  std::uint8_t keep[6];
  mods.mask_row(bound, 0, 0, 3, 0, 6, keep);
  EXPECT_THROW(bound.check(), std::runtime_error);
  EXPECT_NO_THROW(bound.check());
}

TEST(CpuBinding, NewValuesNeedNoRecompile) {
  SKIP_WITHOUT_LLVM();
  const ir::Program p = doc_window();
  cpu::CompiledMods mods(p);
  DocEnv d;
  {
    cpu::CpuBinding bound(p, d.env);
    EXPECT_FALSE(mods.mask(bound, 0, 0, 3, 1));  // different documents
  }
  d.doc[1] = 1;
  d.env.scalars["window"] = ir::Value::integer(1);
  cpu::CpuBinding bound(p, d.env);
  EXPECT_FALSE(mods.mask(bound, 0, 0, 3, 1));  // same document now, but outside the window
  EXPECT_TRUE(mods.mask(bound, 0, 0, 2, 2));
}

TEST(CpuBinding, StubSaysWhyWhenLlvmIsMissing) {
  if (cpu::llvm_backend_available()) GTEST_SKIP() << "this build has LLVM; the stub is not linked";
  EXPECT_THROW(cpu::CompiledMods{doc_window()}, std::runtime_error);
}

}  // namespace

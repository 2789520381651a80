// cpu_attention_forward against the float64 reference (relative L2 <= 1e-5, lse within 1e-5,
// fully masked rows exactly 0 / -inf) on every example program and on hand-made edge cases
// (GQA, Tq != Tkv, odd head dims, fully masked rows with and without a sink, block-sparse lists),
// and its Interpreter and Llvm backends against each other (bit for bit: same numerics, mods
// that agree bit for bit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "tests/support/reference_attention.hpp"
#include "cpu/attention.hpp"
#include "cpu/llvm_backend.hpp"
#include "attention_problem.hpp"
#include "random_program.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using namespace cpu_test;
using cpu::CpuBackend;
using ir::DType;
using ir::Type;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

ir::Expr param(const char* n) { return ir::Var::make(n, Type::Int, ir::VarKind::Param); }
ir::Expr c(std::int64_t v) { return ir::IntImm::make(v); }

// mask_mod: kv_idx + 5 <= q_idx, so rows 0..4 see no key; optionally a sink sinks[h].
ir::Program late_start(bool with_sink) {
  ir::Program p;
  p.name = with_sink ? "late_start_sink" : "late_start";
  p.mask_mod = ir::Mod{ir::ModKind::Mask, {},
                       ir::Compare::make(ir::CompareOp::LE, ir::Binary::make(ir::BinaryOp::Add, param(ir::kParamKv), c(5)),
                                         param(ir::kParamQ)),
                       {}};
  if (with_sink) {
    p.captures = {{"sinks", DType::Float32, 1, {}}};
    p.sink = ir::Mod{ir::ModKind::Sink, {}, ir::Load::make("sinks", DType::Float32, {param(ir::kParamHead)}), {}};
  }
  return p;
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> v = {
      {1, 1, 1, 1, 1, 1},     // the smallest problem
      {2, 4, 2, 37, 53, 16},  // GQA, Tq < Tkv, B > 1
      {1, 6, 3, 70, 20, 24},  // GQA group 2 of 3 heads, Tq > Tkv
      {1, 2, 1, 17, 130, 65}, // odd head dim, one kv head
  };
  return v;
}

TEST(CpuAttention, ExamplesMatchTheFloat64Reference) {
  const auto programs = cpu_test::example_programs();
  std::mt19937_64 rng(2024);
  for (const auto& [name, p] : programs) {
    for (const Shape& s : shapes()) {
      SCOPED_TRACE(name + " B" + std::to_string(s.B) + " Hq" + std::to_string(s.Hq) + " Hkv" + std::to_string(s.Hkv) +
                   " Tq" + std::to_string(s.Tq) + " Tkv" + std::to_string(s.Tkv) + " D" + std::to_string(s.D));
      const cpu_test::RandomWorld world = cpu_test::RandomWorld::for_program(p, 160, rng);
      const Problem pb(s, &world.env, rng);
      const Output got = pb.run(p, CpuBackend::Auto);
      expect_matches_reference(p, pb, got);
      if (cpu::llvm_backend_available()) expect_identical(pb.run(p, CpuBackend::Interpreter), pb.run(p, CpuBackend::Llvm));
    }
  }
}

TEST(CpuAttention, FullyMaskedRowsAreZeroAndMinusInfinity) {
  std::mt19937_64 rng(5);
  const ir::Program p = late_start(false);
  const Problem pb({2, 3, 1, 20, 9, 8}, nullptr, rng);
  for (CpuBackend backend : {CpuBackend::Interpreter, CpuBackend::Auto}) {
    const Output got = pb.run(p, backend);
    EXPECT_EQ(expect_matches_reference(p, pb, got), 2 * 3 * 5);
  }
}

TEST(CpuAttention, LearnedSinkJoinsTheDenominatorAndLse) {
  std::mt19937_64 rng(6);
  const ir::Program p = late_start(true);
  std::vector<float> sinks = {0.5f, -1.0f, 2.0f, kNegInf};  // head 3: a sink that adds nothing
  ir::Env env;
  env.tensors["sinks"] = {DType::Float32, {4}, {}, sinks.data()};
  const Problem pb({1, 4, 2, 12, 15, 8}, &env, rng);
  const Output got = pb.run(p, CpuBackend::Auto);
  // Rows 0..4 have no key: out 0, lse = the sink (and -inf for head 3).
  EXPECT_EQ(expect_matches_reference(p, pb, got), 5);
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(got.lse[h * 12 + i], sinks[h]) << "head " << h << " row " << i;
      for (int d = 0; d < 8; ++d) EXPECT_EQ(got.out[(h * 12 + i) * 8 + d], 0.0f);
    }
  if (cpu::llvm_backend_available()) expect_identical(pb.run(p, CpuBackend::Interpreter), pb.run(p, CpuBackend::Llvm));
}

TEST(CpuAttention, ExplicitScale) {
  std::mt19937_64 rng(8);
  const ir::Program p = late_start(false);
  const Problem pb({1, 2, 2, 30, 30, 16}, nullptr, rng, 0.9f);
  expect_matches_reference(p, pb, pb.run(p, CpuBackend::Auto));
}

// causal inside blocks of 8 queries x 16 keys, with a bound block list.
ir::Program block_sparse() {
  ir::Program p;
  p.name = "block_sparse";
  p.block_indices = ir::BlockIndices{"sel", 8, 16, {}};
  p.mask_mod = ir::Mod{ir::ModKind::Mask, {},
                       ir::Compare::make(ir::CompareOp::GE, param(ir::kParamQ), param(ir::kParamKv)), {}};
  return p;
}

TEST(CpuAttention, BlockListSelectsKeys) {
  std::mt19937_64 rng(9);
  const ir::Program p = block_sparse();
  const Shape s{2, 2, 1, 45, 70, 8};  // 6 query blocks, 5 kv blocks (the last partial)
  const int nq = 6, nkv = 5, K = 3;
  std::vector<std::int32_t> sel(std::size_t(s.B) * s.Hq * nq * K);
  for (auto& x : sel) x = static_cast<std::int32_t>(std::uniform_int_distribution<int>(-1, nkv - 1)(rng));
  sel[0] = sel[1] = 0;  // a repeat counts once
  ir::Env env;
  env.tensors["sel"] = {DType::Int32, {s.B, s.Hq, nq, K}, {}, sel.data()};
  const Problem pb(s, &env, rng);
  const Output got = pb.run(p, CpuBackend::Auto);
  EXPECT_GT(expect_matches_reference(p, pb, got), 0);  // some rows select no causal key
  if (cpu::llvm_backend_available()) expect_identical(pb.run(p, CpuBackend::Interpreter), pb.run(p, CpuBackend::Llvm));

  // Unbound: the element mask alone (the same as a reference without a list).
  const Problem all(s, nullptr, rng);
  expect_matches_reference(p, all, all.run(p, CpuBackend::Auto));

  sel[5] = nkv;  // not a block
  EXPECT_THROW(pb.run(p, CpuBackend::Auto), std::runtime_error);
  sel[5] = -2;
  EXPECT_THROW(pb.run(p, CpuBackend::Auto), std::runtime_error);
}

TEST(CpuAttention, BadInputsAreRejected) {
  std::mt19937_64 rng(10);
  const ir::Program p = late_start(false);
  Problem pb({1, 3, 2, 4, 4, 4}, nullptr, rng);  // Hq not a multiple of Hkv
  EXPECT_THROW(pb.run(p, CpuBackend::Auto), std::invalid_argument);
  pb.in.Hkv = 3;
  pb.in.Tkv = 0;
  EXPECT_THROW(pb.run(p, CpuBackend::Auto), std::invalid_argument);
}

TEST(CpuAttention, OutOfRangeCaptureIsAnErrorOnBothBackends) {
  std::mt19937_64 rng(11);
  const ir::Program p = late_start(true);
  std::vector<float> sinks = {0.5f};  // 1 entry, 2 heads
  ir::Env env;
  env.tensors["sinks"] = {DType::Float32, {1}, {}, sinks.data()};
  const Problem pb({1, 2, 1, 8, 8, 4}, &env, rng);
  EXPECT_THROW(pb.run(p, CpuBackend::Interpreter), std::runtime_error);
  if (cpu::llvm_backend_available()) {
    EXPECT_THROW(pb.run(p, CpuBackend::Llvm), std::runtime_error);
  }
}

TEST(CpuAttention, LlvmBackendWithoutLlvmSaysSo) {
  if (cpu::llvm_backend_available()) GTEST_SKIP() << "this build has LLVM";
  std::mt19937_64 rng(12);
  const Problem pb({1, 1, 1, 2, 2, 2}, nullptr, rng);
  EXPECT_THROW(pb.run(late_start(false), CpuBackend::Llvm), std::runtime_error);
  EXPECT_EQ(cpu::resolve_backend(CpuBackend::Auto), CpuBackend::Interpreter);
}

}  // namespace

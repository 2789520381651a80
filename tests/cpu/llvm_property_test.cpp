// Property: for thousands of random well-typed expressions and random bindings (scalars of every
// type, tensors of every dtype, strided layouts, extreme values), the LLVM back end computes the
// interpreter's value bit for bit (any NaN equal to any NaN), and reports an out-of-range load
// exactly when the interpreter throws for one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "cpu/args.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "cpu/llvm_backend.hpp"
#include "random_program.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using cpu_test::ExprGenerator;
using cpu_test::RandomWorld;

std::uint64_t seed() {
  if (const char* s = std::getenv("FLEXJIT_CPU_SEED")) return std::strtoull(s, nullptr, 10);
  return 0x11f3'c0de'2024ULL;
}

std::string describe(const ir::Env& env) {
  std::string s = "b=" + std::to_string(env.b) + " h=" + std::to_string(env.h) + " q=" + std::to_string(env.q_idx) +
                  " kv=" + std::to_string(env.kv_idx) + " score=" + ir::Value::real(env.score).to_string();
  for (const auto& [name, v] : env.scalars) s += " " + name + "=" + v.to_string();
  return s;
}

TEST(LlvmProperty, RandomExpressionsMatchTheInterpreter) {
  SKIP_WITHOUT_LLVM();
  // Batches of expressions share one module (one JIT compile); each batch meets fresh worlds.
  constexpr int kBatches = 24, kPerBatch = 200, kWorlds = 4, kParamsPerWorld = 4;
  const ir::Program decls = cpu_test::random_decls();
  ExprGenerator gen(seed());
  int evaluated = 0, faulted = 0;
  for (int batch = 0; batch < kBatches; ++batch) {
    std::vector<ir::Expr> exprs;
    for (int i = 0; i < kPerBatch; ++i) exprs.push_back(gen.gen(static_cast<ir::Type>(i % 3), 1 + i % 6));
    const cpu::CompiledExprs compiled(decls, exprs);
    for (int w = 0; w < kWorlds; ++w) {
      RandomWorld world = RandomWorld::for_random_decls(gen.rng());
      const cpu::CpuBinding bound(decls, world.env);
      for (int k = 0; k < kParamsPerWorld; ++k) {
        world.randomize_params(gen.rng());
        for (std::size_t i = 0; i < exprs.size(); ++i) {
          ir::Value want, got;
          bool interp_threw = false, llvm_threw = false;
          try {
            want = ir::evaluate(exprs[i], world.env);
          } catch (const std::runtime_error&) {
            interp_threw = true;
          }
          try {
            got = compiled.evaluate(i, bound, world.env);
          } catch (const std::runtime_error&) {
            llvm_threw = true;
          }
          ASSERT_EQ(llvm_threw, interp_threw) << "out-of-range reports differ for\n"
                                              << ir::to_string(exprs[i]) << "\nat " << describe(world.env);
          if (interp_threw) {
            ++faulted;
            continue;
          }
          ASSERT_TRUE(ir::identical(got, want)) << "llvm " << got << ", interpreter " << want << " for\n"
                                                << ir::to_string(exprs[i]) << "\nat " << describe(world.env);
          ++evaluated;
        }
      }
    }
  }
  // The generator must mostly produce evaluable trees, and some that fault.
  const int total = kBatches * kPerBatch * kWorlds * kParamsPerWorld;
  EXPECT_GT(evaluated, total * 3 / 4);
  EXPECT_GT(faulted, 0);
  std::printf("[llvm property] %d expressions, %d evaluations agreed, %d out-of-range agreed\n", kBatches * kPerBatch,
              evaluated, faulted);
}

}  // namespace

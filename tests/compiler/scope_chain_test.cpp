// Name lookups in a run of closure-making statements: each closure keeps the names as they were
// bound when it was made, and the work of resolving names grows linearly with the statements
// (counted by compiler::scopes_searched(), so the test does not hang on the machine's speed).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "compiler/lower.hpp"
#include "compiler/pipeline.hpp"
#include "ir/interpreter.hpp"

namespace {

using namespace flexjit;

ir::Program compile(const std::string& text) { return compiler::build_ir(dsl::SourceFile("t.py", text)); }

std::string repeat(const std::string& lines, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += lines;
  return out;
}

// Programs whose body repeats `lines` n times; each line reads a name bound before the run.
std::string lambda_run(int n) {
  return "def mask_mod(b, h, q_idx, kv_idx):\n" + repeat("    f = lambda: 0\n    x = q_idx\n", n) + "    return x >= kv_idx\n";
}
std::string def_run(int n) {
  return "def mask_mod(b, h, q_idx, kv_idx):\n" + repeat("    def f():\n        return 0\n    x = kv_idx\n", n) +
         "    return q_idx >= x\n";
}
std::string call_run(int n) {
  return "OFFSET = 1\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    x = q_idx\n" +
         repeat("    f = lambda: x + OFFSET\n    y = f()\n", n) + "    return y >= kv_idx\n";
}

std::uint64_t lookup_work(const std::string& text) {
  const std::uint64_t before = compiler::scopes_searched();
  compile(text);
  return compiler::scopes_searched() - before;
}

TEST(ScopeChain, ClosureRunsResolveNamesInLinearWork) {
  for (auto program : {lambda_run, def_run, call_run}) {
    const std::uint64_t n = lookup_work(program(1000)), four_n = lookup_work(program(4000));
    EXPECT_GT(n, 1000u);
    // Linear work is four times as much; one scope per closure made before (the old chain) is 16.
    EXPECT_LT(four_n, 5 * n) << "N: " << n << ", 4N: " << four_n;
  }
}

TEST(ScopeChain, TwentyThousandClosuresCheck) {
  const ir::Program p = compile(lambda_run(20000));
  EXPECT_TRUE(ir::eval_mask(p, {}, 0, 0, 5, 5));
  EXPECT_FALSE(ir::eval_mask(p, {}, 0, 0, 4, 5));
  const ir::Program calls = compile(call_run(20000));
  EXPECT_TRUE(ir::eval_mask(calls, {}, 0, 0, 7, 8));
  EXPECT_FALSE(ir::eval_mask(calls, {}, 0, 0, 7, 9));
}

// Each closure holds the scope before it, which holds the closure before that: freeing a run of
// 200,000 must not take a destructor call per closure on the stack.
TEST(ScopeChain, LongClosureRunsAreFreedWithoutDeepRecursion) {
  const std::string text =
      "def mask_mod(b, h, q_idx, kv_idx):\n" + repeat("    f = lambda: 0\n", 200000) + "    return q_idx >= kv_idx\n";
  EXPECT_TRUE(ir::eval_mask(compile(text), {}, 0, 0, 5, 5));
}

// Each closure sees the names as bound when it was made, also after the run rebinds them, and a
// branch does not see what the other branch bound.
TEST(ScopeChain, ClosuresKeepTheirBindings) {
  const ir::Program p = compile(
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    x = 1.0\n"
      "    f = lambda: x\n"
      "    x = 2.0\n"
      "    g = lambda: x\n"
      "    x = 4.0\n"
      "    if q_idx > kv_idx:\n"
      "        y = 8.0\n"
      "        h2 = lambda: y\n"
      "    else:\n"
      "        h2 = lambda: x * 3.0\n"
      "    return f() + g() + h2() + score\n");
  EXPECT_EQ(ir::eval_score(p, {}, 0, 0, 3, 2, 0.5f), 11.5f);
  EXPECT_EQ(ir::eval_score(p, {}, 0, 0, 2, 3, 0.5f), 15.5f);
}

}  // namespace

// Calls through closures: two closures of one function with different captured values are two
// functions (Python runs `twice(twice(inc))`), while recursion, also through a new closure at
// each level, and inlining that would make too many nodes are errors found in bounded time.
#include <gtest/gtest.h>

#include <string>

#include "compiler/lower.hpp"
#include "compiler/pipeline.hpp"
#include "flexjit/error.hpp"
#include "ir/interpreter.hpp"

namespace {

using namespace flexjit;

ir::Program compile(const std::string& text) { return compiler::build_ir(dsl::SourceFile("t.py", text)); }

std::string error_of(const std::string& text) {
  try {
    compile(text);
  } catch (const flexjit::CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

float score_at(const std::string& text, float score) { return ir::eval_score(compile(text), {}, 0, 0, 3, 2, score); }

const std::string kTwice = "twice = lambda f: lambda x: f(f(x))\ninc = lambda x: x + 1\n";

TEST(ClosureCalls, TwiceOfTwiceIsNotRecursion) {
  EXPECT_EQ(score_at(kTwice + "def score_mod(score, b, h, q_idx, kv_idx):\n    return twice(twice(inc))(score)\n", 0.5f),
            4.5f);
  EXPECT_EQ(score_at(kTwice + "def score_mod(score, b, h, q_idx, kv_idx):\n"
                              "    return twice(twice(twice(inc)))(score)\n",
                     0.5f),
            8.5f);
}

TEST(ClosureCalls, ClosuresOfOneFunctionWithDifferentCaptures) {
  const std::string add = "add = lambda n: lambda x: x + n\n";
  EXPECT_EQ(score_at(kTwice + add + "def score_mod(score, b, h, q_idx, kv_idx):\n"
                                    "    return twice(add(q_idx))(twice(add(kv_idx))(score))\n",
                     0.5f),
            0.5f + 2 * 3 + 2 * 2);
}

TEST(ClosureCalls, RecursionIsStillAnError) {
  EXPECT_NE(error_of("def f(x):\n    return f(x - 1)\n\ndef score_mod(score, b, h, q_idx, kv_idx):\n    return f(score)\n")
                .find("t.py:2:12: error: recursion is not supported: 'f' calls itself"),
            std::string::npos);
  // The same lambda called from inside itself with the same captures.
  EXPECT_NE(error_of("def g(f):\n    return f(f)\n\ndef score_mod(score, b, h, q_idx, kv_idx):\n"
                     "    return g(lambda s: s(s))\n")
                .find("recursion is not supported: '<lambda>' calls itself"),
            std::string::npos);
}

TEST(ClosureCalls, RecursionThroughANewClosureAtEachLevel) {
  EXPECT_NE(error_of("def make():\n    return lambda x: make()(x)\n\n"
                     "def score_mod(score, b, h, q_idx, kv_idx):\n    return make()(score)\n")
                .find("error: recursion is not supported: '<lambda>' calls itself, with a new closure at each level "
                      "(calls nest more than 64 levels)"),
            std::string::npos);
}

// f_k(x) = f_{k-1}(x) + f_{k-1}(x): inlining makes 2^k copies of f0's body.
std::string doubling_calls(int levels) {
  std::string text = "def f0(x):\n    return x + 1\n";
  for (int i = 1; i < levels; ++i)
    text += "def f" + std::to_string(i) + "(x):\n    return f" + std::to_string(i - 1) + "(x) + f" +
            std::to_string(i - 1) + "(x)\n";
  return text + "def score_mod(score, b, h, q_idx, kv_idx):\n    return f" + std::to_string(levels - 1) + "(score)\n";
}

TEST(ClosureCalls, InliningWithinTheNodeBudget) {
  EXPECT_EQ(score_at(doubling_calls(14), 0.5f), 8192.0f * 1.5f);  // 2^13 copies, 40,000 nodes
}

TEST(ClosureCalls, InliningPastTheNodeBudgetIsProgramTooLarge) {
  const std::string err = error_of(doubling_calls(40));
  EXPECT_NE(err.find("error: program too large ("), std::string::npos) << err;
  EXPECT_NE(err.find(" nodes, limit " + std::to_string(compiler::kMaxLoweredNodes) +
                     "): every call is inlined, and inlining this one crosses the limit"),
            std::string::npos)
      << err;
}

TEST(ClosureCalls, CallsThatMakeNoNodeCountToo) {
  std::string nested = "ident";
  for (int i = 0; i < 40; ++i) nested = "twice(" + nested + ")";
  const std::string err = error_of(kTwice + "ident = lambda x: x\ndef score_mod(score, b, h, q_idx, kv_idx):\n    return " +
                                   nested + "(score)\n");
  EXPECT_NE(err.find("error: program too large ("), std::string::npos) << err;
}

}  // namespace

// Python operators as lowering gives them meaning: programs compiled from source and evaluated by
// the interpreter over a grid of positions, against the value Python / PyTorch would compute.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/pipeline.hpp"
#include "ir/interpreter.hpp"

namespace {

using namespace flexjit;

ir::Program compile(const std::string& text) { return compiler::build_ir(dsl::SourceFile("t.py", text)); }

void expect_mask(const std::string& text, const std::function<bool(int, int)>& want) {
  const ir::Program p = compile(text);
  for (int q = 0; q < 12; ++q)
    for (int kv = 0; kv < 12; ++kv)
      EXPECT_EQ(ir::eval_mask(p, {}, 0, 0, q, kv), want(q, kv)) << text << "q_idx " << q << ", kv_idx " << kv;
}

void expect_score(const std::string& text, const std::function<float(int, int)>& want) {
  const ir::Program p = compile(text);
  for (int q = 0; q < 12; ++q)
    for (int kv = 0; kv < 12; ++kv)
      EXPECT_EQ(ir::eval_score(p, {}, 0, 0, q, kv, 0.5f), want(q, kv)) << text << "q_idx " << q << ", kv_idx " << kv;
}

TEST(PythonSemantics, InvertOfABoolIsLogicalNotAsInPyTorch) {
  expect_mask("def mask_mod(b, h, q_idx, kv_idx):\n    return ~(q_idx < kv_idx)\n",
              [](int q, int kv) { return !(q < kv); });
  expect_mask("def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n\n"
              "def mask_mod(b, h, q_idx, kv_idx):\n    return ~causal(b, h, q_idx, kv_idx) | (q_idx == kv_idx)\n",
              [](int q, int kv) { return q < kv || q == kv; });
  expect_score("def score_mod(score, b, h, q_idx, kv_idx):\n"
               "    return torch.where(~(kv_idx % 2 == 0), score, -1.0)\n",
               [](int, int kv) { return kv % 2 != 0 ? 0.5f : -1.0f; });
}

TEST(PythonSemantics, InvertOfAnIntStaysBitwise) {
  expect_score("def score_mod(score, b, h, q_idx, kv_idx):\n    return ~q_idx + kv_idx\n",
               [](int q, int kv) { return static_cast<float>(~q + kv); });
}

TEST(PythonSemantics, DivisionByARuntimeZeroStaysTotal) {
  // Zero on the diagonal only: not known when compiling, so the division is kept, and is 0 there.
  expect_score("def score_mod(score, b, h, q_idx, kv_idx):\n    return q_idx // (kv_idx - q_idx)\n",
               [](int q, int kv) {
                 if (q == kv) return 0.0f;
                 const int d = kv - q;
                 return static_cast<float>(q / d - ((q % d != 0) && ((q < 0) != (d < 0))));
               });
}

}  // namespace

// Top-level code no mod reaches is parsed and skipped; what a mod reaches runs in order, asserts
// on needed names included, and is refused where it is not supported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/pipeline.hpp"
#include "flexjit/error.hpp"
#include "ir/interpreter.hpp"

namespace flexjit::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ir::Program build(const std::string& text) { return build_ir(dsl::SourceFile("t.py", text)); }

std::vector<std::string> skipped(const ir::Program& p) {
  std::vector<std::string> out;
  for (const auto& s : p.skipped) out.push_back(std::to_string(s.pos.line) + ": " + s.what);
  return out;
}

std::string error_of(const std::string& text) {
  try {
    build(text);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(Reachable, SkipsWhatNoModUses) {
  const ir::Program p = build(
      "import random\n"
      "import numpy as np\n"
      "SEQ = np.arange(10)\n"
      "W = 4\n"
      "def host(x, *args, **kwargs):\n"
      "    return x\n"
      "@torch.library.custom_op('lib::op', mutates_args=())\n"
      "def op(x):\n"
      "    return x\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return q_idx - kv_idx < W\n"
      "print(mask_mod)\n"
      "for i in range(3):\n"
      "    pass\n");
  EXPECT_THAT(skipped(p), ElementsAre("1: import random", "2: import numpy", "3: SEQ = ...", "5: def host",
                                      "7: decorator", "8: def op", "12: expression", "13: 'for' statement"));
  ir::Env env;
  EXPECT_TRUE(ir::eval_mask(p, env, 0, 0, 5, 2));
  EXPECT_FALSE(ir::eval_mask(p, env, 0, 0, 9, 2));
}

TEST(Reachable, RunsEveryDefinitionOfANeededNameInOrder) {
  const ir::Program p = build(
      "W = 4\n"
      "W += 2\n"
      "def causal(b, h, q_idx, kv_idx):\n"
      "    return q_idx >= kv_idx\n"
      "causal.__name__ = 'causal'\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return causal(b, h, q_idx, kv_idx) & (q_idx - kv_idx < W)\n");
  EXPECT_TRUE(skipped(p).empty());
  ir::Env env;
  EXPECT_TRUE(ir::eval_mask(p, env, 0, 0, 7, 2));   // 5 < 6: the += ran
  EXPECT_FALSE(ir::eval_mask(p, env, 0, 0, 8, 2));
}

TEST(Reachable, KeepsAssertsOnNeededNamesOnly) {
  const ir::Program p = build(
      "window: int\n"
      "SEQ = 4096\n"
      "assert SEQ > 0\n"
      "assert window > 0, 'window must be positive'\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return q_idx - kv_idx < window\n");
  EXPECT_THAT(skipped(p), ElementsAre("2: SEQ = ...", "3: assert"));
  ASSERT_EQ(p.checks.size(), 1u);
  EXPECT_EQ(p.checks[0].message, "window must be positive");
}

TEST(Reachable, RefusesWhatAModReachesWhereItIs) {
  EXPECT_THAT(error_of("window: int\nwindow = 3\ndef mask_mod(b, h, q_idx, kv_idx):\n    return True\n"),
              HasSubstr("t.py:2:1: error: 'window' is already declared"));
  EXPECT_THAT(error_of("@my_decorator\ndef causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\nmask_mod = causal\n"),
              HasSubstr("t.py:1:2: error:"));
  // A name only a loop or a class could define: refused at that statement.
  EXPECT_THAT(error_of("for W in range(3):\n    pass\ndef mask_mod(b, h, q_idx, kv_idx):\n    return q_idx < W\n"),
              HasSubstr("t.py:1:1: error: 'for' loops are not supported"));
  // No entry point at all: a statement flexjit cannot run may be why.
  EXPECT_THAT(error_of("class M:\n    pass\n"), HasSubstr("t.py:1:1: error: class definitions are not supported"));
}

}  // namespace
}  // namespace flexjit::compiler

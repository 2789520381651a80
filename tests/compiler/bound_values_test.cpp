// Shape values and runtime asserts as lowering gives them: which shape values a program reads
// (one hidden Int scalar per axis it reads, named "t.shape[i]"), their values once a call binds
// the tensor, and the asserts kept for the call to check, with their messages.
#include <gtest/gtest.h>

#include "compiler/pipeline.hpp"
#include "ir/bound_values.hpp"
#include "ir/interpreter.hpp"

namespace {

using namespace flexjit;

ir::Program compile(const std::string& text) { return compiler::build_ir(dsl::SourceFile("t.py", text)); }

std::vector<std::string> shape_values(const ir::Program& p) {
  std::vector<std::string> out;
  for (const auto& s : p.scalars)
    if (s.is_shape_value()) out.push_back(s.name + " = " + s.shape_of + " axis " + std::to_string(s.axis));
  return out;
}

// A [3, 5, 7] int32 tensor named t (its elements are never read here).
struct Bound {
  std::vector<std::int32_t> data = std::vector<std::int32_t>(105);
  ir::Env env;
  explicit Bound(const ir::Program& p) {
    env.tensors["t"] = {ir::DType::Int32, {3, 5, 7}, {}, data.data()};
    ir::bind_shape_values(p, env);
  }
};

TEST(ShapeValues, EverySpellingReadsOneAxis) {
  const ir::Program p = compile(
      "t: Tensor[int32, 3]\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    B, H, T = t.shape\n"
      "    return score + len(t) * 100 + t.size(1) * 10 + t.size(dim=-1) + t[b].shape[0] * 1000 + T + H + t.ndim\n");
  EXPECT_EQ(shape_values(p), (std::vector<std::string>{"t.shape[0] = t axis 0", "t.shape[1] = t axis 1",
                                                       "t.shape[2] = t axis 2"}));
  Bound bound(p);
  // 3 * 100 + 5 * 10 + 7 + 5 * 1000 + 7 + 5 + 3
  EXPECT_EQ(ir::eval_score(p, bound.env, 0, 0, 0, 0, 0.5f), 5372.5f);
}

TEST(ShapeValues, OnlyTheAxesReadAreKept) {
  const ir::Program p = compile("t: Tensor[int32, 3]\nn: int\n"
                                "def mask_mod(b, h, q_idx, kv_idx):\n    return kv_idx < t.shape[-1] + n\n");
  EXPECT_EQ(shape_values(p), (std::vector<std::string>{"t.shape[2] = t axis 2"}));
  EXPECT_EQ(p.scalars.size(), 2u);
  // len of a tuple is a constant; an unbound tensor leaves its shape values unset.
  const ir::Program q = compile("def mask_mod(b, h, q_idx, kv_idx):\n    return kv_idx < len((1, 2, 3))\n");
  EXPECT_TRUE(ir::eval_mask(q, {}, 0, 0, 0, 2));
  EXPECT_FALSE(ir::eval_mask(q, {}, 0, 0, 0, 3));
  ir::Env empty;
  ir::bind_shape_values(p, empty);
  EXPECT_TRUE(empty.scalars.empty());
}

TEST(RuntimeAsserts, KeptWithTheirMessagesAndCheckedOnBinding) {
  const ir::Program p = compile(
      "t: Tensor[int32, 3]\nwindow: int\n"
      "assert window > 0, 'window must be positive'\n"
      "assert t.dim() == 3, 'rank'\n"  // known when compiling: not kept
      "assert len(t) <= window  # batches fit the window\n"
      "def make(w):\n"
      "    assert w % 2 == 1, f'odd windows only, got {w}'\n"
      "    def mask(b, h, q_idx, kv_idx):\n"
      "        return abs(q_idx - kv_idx) <= w // 2\n"
      "    return mask\n"
      "mask_mod = make(window)\n");
  ASSERT_EQ(p.checks.size(), 3u);
  EXPECT_EQ(p.checks[0].message, "window must be positive");
  EXPECT_EQ(p.checks[1].message, "len(t) <= window");
  EXPECT_EQ(p.checks[2].message, "f'odd windows only, got {w}'");
  Bound bound(p);
  bound.env.scalars["window"] = ir::Value::integer(5);
  EXPECT_EQ(ir::failed_checks(p, bound.env), std::vector<std::string>{});
  bound.env.scalars["window"] = ir::Value::integer(2);
  EXPECT_EQ(ir::failed_checks(p, bound.env),
            (std::vector<std::string>{"assertion failed: len(t) <= window (line 5)",
                                      "assertion failed: f'odd windows only, got {w}' (line 7)"}));
  // A scalar the call did not bind skips the asserts that read it (its absence is reported).
  bound.env.scalars.erase("window");
  EXPECT_EQ(ir::failed_checks(p, bound.env), std::vector<std::string>{});
}

}  // namespace

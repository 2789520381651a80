// A NaN score on a kept key makes its row's out and lse NaN, as PyTorch's softmax does; NaN
// scores of masked keys do not count (attention_case.cpp checks every row the reference makes
// NaN, and the other rows as usual).
#include <gtest/gtest.h>

#include "tests/gpu/attention_case.hpp"

namespace flexjit::gpu_test {
namespace {

class NanScores : public GpuTest {};

// 300 rows per head: 75 with one NaN score, 75 with only NaN scores (programs/nan_scores.py).
TEST_F(NanScores, RowsWithANanScoreAreNan) {
  AttentionRun run({"nan_scores", bf16, 128, 1, 2, 1, 300, 300}, 31);
  EXPECT_EQ(run.run_and_check().nan_rows, 2 * 150);
}

TEST_F(NanScores, RowsWithANanScoreAreNanOnSm80) {
  Case c{"nan_scores", fp16, 64, 1, 2, 1, 300, 300};
  c.family = "sm80_fwd";
  AttentionRun run(c, 32);
  EXPECT_EQ(run.run_and_check().nan_rows, 2 * 150);
}

}  // namespace
}  // namespace flexjit::gpu_test

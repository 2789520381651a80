// Rows in which every key is masked: out exactly 0 and lse -inf, or lse = the sink when the
// program has one (attention_case.cpp checks both for every row the reference finds empty).
#include <gtest/gtest.h>

#include "tests/gpu/attention_case.hpp"

namespace flexjit::gpu_test {
namespace {

class MaskedRows : public GpuTest {};

TEST_F(MaskedRows, LeadingRowsSeeNoKey) {
  AttentionRun run({"masked_rows", bf16, 128, 2, 2, 1, 300, 300}, 21);
  const CaseFigures f = run.run_and_check();
  EXPECT_EQ(f.masked_rows, 2 * 2 * 100);
}

TEST_F(MaskedRows, WithASinkLseIsTheSink) {
  AttentionRun run({"masked_rows_sink", fp16, 64, 1, 3, 1, 257, 90}, 22);
  const CaseFigures f = run.run_and_check();
  EXPECT_EQ(f.masked_rows, 3 * 100);
}

TEST_F(MaskedRows, EveryRowMaskedByAZeroWindow) {
  AttentionRun run({"sliding_window", bf16, 64, 1, 2, 2, 200, 200}, 23);
  run.bindings().scalars["window"] = 0LL;
  const CaseFigures f = run.run_and_check();
  EXPECT_EQ(f.masked_rows, f.rows);
}

TEST_F(MaskedRows, ZeroWindowWithSinks) {
  AttentionRun run({"learned_sink", bf16, 128, 1, 2, 1, 150, 150}, 24);
  run.bindings().scalars["window"] = 0LL;
  const CaseFigures f = run.run_and_check();
  EXPECT_EQ(f.masked_rows, f.rows);
}

}  // namespace
}  // namespace flexjit::gpu_test

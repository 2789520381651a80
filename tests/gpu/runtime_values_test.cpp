// Runtime scalars, captured tensors and position offsets are kernel parameters: changing them
// changes the results, and never compiles anything (offsets: past the first call that has any).
#include <gtest/gtest.h>

#include "tests/gpu/attention_case.hpp"

namespace flexjit::gpu_test {
namespace {

class RuntimeValues : public GpuTest {};

bool differ(const std::vector<float>& a, const std::vector<float>& b) { return a != b; }

TEST_F(RuntimeValues, ChangingAScalarDoesNotRecompile) {
  AttentionRun run({"sliding_window", bf16, 64, 1, 2, 1, 300, 300}, 11);
  run.bindings().scalars["window"] = 16LL;
  run.run_and_check();
  const std::vector<float> first = run.last_out();
  const auto compiles = engine().counters().compiles;
  for (long long w : {1LL, 100LL, 1000LL}) {
    run.bindings().scalars["window"] = w;
    run.run_and_check();
    EXPECT_TRUE(differ(first, run.last_out())) << "window " << w;
  }
  EXPECT_EQ(engine().counters().compiles, compiles);
}

// The mask compares q_idx - kv_idx (32 bits) with the 64-bit window through a clamp
// (codegen/cuda_expr.cpp): values at and past the 32-bit ends must mask as the reference does.
TEST_F(RuntimeValues, WindowsAtAndPastThe32BitRange) {
  const long long i32max = 2147483647LL, i64max = 9223372036854775807LL;
  for (const char* program : {"sliding_window", "sink_window"}) {
    AttentionRun run({program, bf16, 128, 1, 2, 1, 333, 333}, 14);
    for (long long w : {-i64max - 1, -(1LL << 40), -i32max - 1, -i32max, -1LL, 0LL, 1LL, 7LL, i32max - 1, i32max,
                        i32max + 1, 1LL << 40, i64max}) {
      SCOPED_TRACE(testing::Message() << program << " window " << w);
      run.bindings().scalars["window"] = w;
      run.run_and_check();
    }
  }
}

// The first call with position offsets compiles the kernel that adds them; every other offset
// (and the calls without) compiles nothing more.
TEST_F(RuntimeValues, ChangingPositionOffsetsCompilesOnce) {
  Case c{"sliding_window", bf16, 64, 1, 2, 1, 300, 300};
  c.q_offset = 64;
  AttentionRun run(c, 21);
  run.bindings().scalars["window"] = 100LL;
  run.run_and_check();
  const auto compiles = engine().counters().compiles;
  for (const auto& [q_offset, kv_offset] : {std::pair{0, 64}, std::pair{1000, 900}, std::pair{0, 0}}) {
    c.q_offset = q_offset, c.kv_offset = kv_offset;
    AttentionRun again(c, 21);
    again.bindings().scalars["window"] = 100LL;
    again.run_and_check();
  }
  EXPECT_EQ(engine().counters().compiles, compiles);
}

TEST_F(RuntimeValues, ChangingCapturedTensorValuesDoesNotRecompile) {
  AttentionRun run({"document", fp16, 128, 2, 2, 2, 700, 700}, 12);
  run.run_and_check();
  const std::vector<float> first = run.last_out();
  const auto compiles = engine().counters().compiles;
  const Program p = load_program("document");
  run.bindings().tensors["doc_ids"] = random_tensor("doc_ids", p.parameters()[0], {2, 2, 700, 700}, run.rng());
  run.run_and_check();
  EXPECT_TRUE(differ(first, run.last_out()));
  EXPECT_EQ(engine().counters().compiles, compiles);
}

TEST_F(RuntimeValues, ScoreModTensorAndFloatScalar) {
  AttentionRun run({"dense_bias", bf16, 64, 1, 4, 2, 130, 200}, 13);
  run.bindings().scalars["use_bias"] = true;
  run.bindings().scalars["temperature"] = 1.0;
  run.run_and_check();
  const std::vector<float> first = run.last_out();
  const auto compiles = engine().counters().compiles;
  run.bindings().scalars["temperature"] = 0.25;
  run.run_and_check();
  EXPECT_TRUE(differ(first, run.last_out()));
  run.bindings().scalars["use_bias"] = false;
  run.run_and_check();
  EXPECT_EQ(engine().counters().compiles, compiles);
}

}  // namespace
}  // namespace flexjit::gpu_test

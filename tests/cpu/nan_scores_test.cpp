// NaN scores as PyTorch treats them: a NaN score on a kept key (from the score mod or from a NaN
// in q) makes its row's out and lse NaN, on both CPU backends and in the float64 reference; NaN
// scores of masked keys do not count, and a row with every key masked stays out 0, lse -inf.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "attention_problem.hpp"
#include "compiler/pipeline.hpp"
#include "cpu/llvm_backend.hpp"
#include "tests/support/reference_attention.hpp"

namespace {

using namespace flexjit;
using namespace cpu_test;
using cpu::CpuBackend;

// Rows q_idx % 4 == 1: one NaN score on a kept key; == 2: only NaN scores; == 3: NaN scores on
// masked keys only; row 0: every key masked.
const char* const kProgram =
    "def mask_mod(b, h, q_idx, kv_idx):\n"
    "    return (q_idx > 0) & ((q_idx % 4 != 3) | (kv_idx < 5))\n"
    "\n"
    "def score_mod(score, b, h, q_idx, kv_idx):\n"
    "    r = q_idx % 4\n"
    "    nan = ((r == 1) & (kv_idx == 0)) | (r == 2) | ((r == 3) & (kv_idx >= 5))\n"
    "    return torch.where(nan, float(\"nan\"), score)\n";

bool all_nan(const std::vector<float>& out, std::size_t row, int D) {
  for (int d = 0; d < D; ++d)
    if (!std::isnan(out[row * D + d])) return false;
  return true;
}

// Rows the reference makes NaN must be NaN in `got` (out and lse); the rest match the reference.
// Returns the NaN rows.
std::vector<std::size_t> expect_nan_rows_match(const ir::Program& p, const Problem& pb, const Output& got) {
  test::ReferenceInputs in{pb.in.q, pb.in.k, pb.in.v, pb.in.B, pb.in.Hq, pb.in.Hkv, pb.in.Tq, pb.in.Tkv, pb.in.D};
  in.scale = 1.0 / std::sqrt(static_cast<double>(pb.in.D));
  const test::ReferenceOutputs ref = test::reference_attention(p, in);
  const int D = pb.in.D;
  std::vector<std::size_t> nan_rows;
  for (std::size_t r = 0; r < ref.lse.size(); ++r) {
    if (std::isnan(ref.lse[r])) {
      nan_rows.push_back(r);
      EXPECT_TRUE(std::isnan(got.lse[r])) << "row " << r;
      EXPECT_TRUE(all_nan(got.out, r, D)) << "row " << r;
      continue;
    }
    EXPECT_EQ(std::isinf(got.lse[r]), std::isinf(ref.lse[r])) << "row " << r;
    if (!std::isinf(ref.lse[r])) {
      EXPECT_NEAR(got.lse[r], ref.lse[r], 1e-5) << "row " << r;
    }
    for (int d = 0; d < D; ++d) EXPECT_NEAR(got.out[r * D + d], ref.out[r * D + d], 1e-5) << "row " << r;
  }
  return nan_rows;
}

std::vector<CpuBackend> backends() {
  if (cpu::llvm_backend_available()) return {CpuBackend::Interpreter, CpuBackend::Llvm};
  return {CpuBackend::Interpreter};
}

TEST(NanScores, ARowWithANanScoreIsNan) {
  const ir::Program p = compiler::build_ir(dsl::SourceFile("nan_scores.py", kProgram));
  std::mt19937_64 rng(17);
  const Problem pb({1, 2, 1, 12, 9, 8}, nullptr, rng);
  for (CpuBackend backend : backends()) {
    const Output got = pb.run(p, backend);
    const std::vector<std::size_t> nan_rows = expect_nan_rows_match(p, pb, got);
    // Per head: rows 1, 5, 9 (one NaN score) and 2, 6, 10 (only NaN scores); row 0 is empty.
    const std::vector<std::size_t> want = {1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22};
    EXPECT_EQ(nan_rows, want);
    EXPECT_EQ(got.lse[0], -std::numeric_limits<float>::infinity());
    for (int d = 0; d < 8; ++d) EXPECT_EQ(got.out[d], 0.0f);
  }
}

TEST(NanScores, ANanInQMakesItsRowNan) {
  const ir::Program p = compiler::build_ir(dsl::SourceFile(
      "causal.py", "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"));
  std::mt19937_64 rng(18);
  Problem pb({1, 1, 1, 6, 6, 4}, nullptr, rng);
  pb.q[3 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();  // row 3, one element
  for (CpuBackend backend : backends())
    EXPECT_EQ(expect_nan_rows_match(p, pb, pb.run(p, backend)), std::vector<std::size_t>{3});
}

}  // namespace

// ir::differentiate against finite differences of the mods themselves (tests/ir/derivative_check.hpp
// says how the step and tolerance are chosen): every score_mod and sink of examples/, the
// mission's score mods, and one program per family of operations.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include "compiler/pipeline.hpp"
#include "dsl/source.hpp"
#include "tests/ir/derivative_check.hpp"

namespace {

namespace ir = flexjit::ir;
using ir_test::Bindings;

ir::Program compile(const std::string& text) {
  return flexjit::compiler::build_ir(flexjit::dsl::SourceFile("t.py", text));
}

// The mods of p that have a derivative (score_mod, sink), each checked at 300 random points.
void check_program(const std::string& name, const ir::Program& p, Bindings& bindings, std::int64_t positions,
                   float score_range = 6.0f) {
  std::mt19937 rng(std::hash<std::string>{}(name));
  const auto points = ir_test::random_points(300, 4, positions, score_range, rng);
  if (p.score_mod) ir_test::expect_derivatives_match(name + " score_mod", *p.score_mod, bindings, points);
  if (p.sink) ir_test::expect_derivatives_match(name + " sink", *p.sink, bindings, points);
}

void check_text(const std::string& name, const std::string& text, std::int64_t n = 8, std::int64_t positions = 8,
                float lo = -1.0f, float hi = 1.0f) {
  SCOPED_TRACE(name);
  const ir::Program p = compile(text);
  ASSERT_TRUE(p.score_mod || p.sink);
  std::mt19937 rng(7);
  Bindings bindings = ir_test::random_bindings(p, 4, n, rng, lo, hi);
  check_program(name, p, bindings, positions);
}

TEST(DerivativeExamples, EveryScoreModAndSinkOfTheExamples) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLEXJIT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int checked = 0;
  for (const fs::path& f : files) {
    const ir::Program p = flexjit::compiler::build_ir(flexjit::dsl::SourceFile::from_path(f.string()));
    if (!p.score_mod && !p.sink) continue;
    SCOPED_TRACE(f.filename().string());
    std::mt19937 rng(11);
    // Rank-2 tensors are [heads, 257]: relative_position_bias.py indexes up to 2 * 128.
    Bindings bindings = ir_test::random_bindings(p, 4, 257, rng);
    check_program(f.stem().string(), p, bindings, 300);
    ++checked;
  }
  EXPECT_GE(checked, 5);  // alibi, alibi_softcap_window, learned_sink, relative_position_bias, softcap
}

TEST(DerivativeMission, AlibiWithASlopesTensor) {
  check_text("alibi slopes", R"(
slopes: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)
)");
}

TEST(DerivativeMission, SoftCapping) {
  check_text("softcap", R"(
CAP = 4.0
def score_mod(score, b, h, q_idx, kv_idx):
    return CAP * torch.tanh(score / CAP)
)");
}

TEST(DerivativeMission, RelativePositionTable) {
  // q_idx - kv_idx + OFF stays in [1, 15] for positions in [0, 8): the table is [4, 17].
  check_text("relative position table", R"(
table: Tensor[float32, 2]
OFF = 8
def score_mod(score, b, h, q_idx, kv_idx):
    return score + table[h, q_idx - kv_idx + OFF]
)", 17);
}

TEST(DerivativeMission, PerHeadScale) {
  check_text("per-head scale", R"(
scales: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score * scales[h]
)");
}

TEST(DerivativeMission, Combinations) {
  check_text("scale + alibi + table, capped", R"(
scales: Tensor[float32, 1]
slopes: Tensor[float32, 1]
table: Tensor[float32, 2]
OFF = 8
CAP = 3.0
def score_mod(score, b, h, q_idx, kv_idx):
    s = score * scales[h] + slopes[h] * (kv_idx - q_idx) + table[h, q_idx - kv_idx + OFF]
    return CAP * torch.tanh(s / CAP)
)", 17);
  check_text("learned sink with a transformed tensor", R"(
sinks: Tensor[float32, 1]
scales: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score * scales[h]
def sink(b, h):
    return sinks[h] * 2.0 + torch.log(scales[h] * scales[h] + 1.0)
)");
}

TEST(DerivativeOps, Arithmetic) {
  check_text("+ - * / neg", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return -score * score - 3.0 * score / (1.0 + score * score) + score / (w[h] * w[h] + 0.5) + w[h] / (score * score + 1.0)
)");
  check_text("one element read at two places", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return w[h] * w[h] * score + w[kv_idx] * score
)", 8, 4);
  check_text("a runtime float scalar is a constant", R"(
temperature: float
def score_mod(score, b, h, q_idx, kv_idx):
    return score / temperature + temperature * score * score
)");
}

TEST(DerivativeOps, LibraryFunctions) {
  check_text("exp exp2 log", R"(
def score_mod(score, b, h, q_idx, kv_idx):
    return torch.exp(score / 4.0) + torch.exp2(score / 3.0) + torch.log(1.0 + score * score)
)");
  check_text("sqrt rsqrt sigmoid tanh", R"(
def score_mod(score, b, h, q_idx, kv_idx):
    return torch.sqrt(score * score + 1.0) + rsqrt(score * score + 2.0) + torch.sigmoid(score) * torch.tanh(score)
)");
  check_text("log2 log1p sin cos", R"(
def score_mod(score, b, h, q_idx, kv_idx):
    return torch.log2(2.0 + torch.sin(score)) + torch.log1p(score * score) + torch.cos(score)
)");
  check_text("tan erf tanh_approx", R"(
def score_mod(score, b, h, q_idx, kv_idx):
    return torch.tan(score / 5.0) + torch.erf(score / 2.0) + tanh_approx(score / 3.0)
)");
  check_text("pow with constant exponents", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return 0.1 * (score * score + 1.0) ** 1.5 + 0.1 * score ** 2 + (0.3 * score * w[h]) ** 3.0 + (w[h] * w[h] + 1.0) ** (h + 0.5)
)");  // scaled so the values stay near 30: the fp32 differences' rounding grows with them
}

TEST(DerivativeOps, BranchesTakeTheTakenBranch) {
  check_text("min max abs where", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return max(score, 0.5 * score) + min(score, w[h]) + abs(score - w[h]) + where(score > w[h], score * w[h], score / 2.0)
)");
  check_text("clamp", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return clamp(score, -2.0, 2.0) + torch.clamp(score * w[h], min=-0.5)
)");
  check_text("if on the score", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    if score > 0.0 and q_idx >= kv_idx:
        return score * w[h]
    return score - w[kv_idx]
)");
}

TEST(DerivativeOps, IntegerPartsAreConstants) {
  check_text("casts", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score + float(q_idx - kv_idx) * 0.1 + float(h) * w[h] + score * float(int(score)) + float(score > w[h])
)");
  check_text("floor ceil // %", R"(
w: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return torch.floor(score) * w[h] + torch.ceil(score / 2.0) + score // 1.5 + (score * 3.0) % (w[h] + 2.0)
)");
}

TEST(DerivativeOps, Activations) {
  check_text("relu silu softplus gelu sign", R"(
import torch.nn.functional as F
def score_mod(score, b, h, q_idx, kv_idx):
    return F.relu(score) + F.silu(score) + F.softplus(score) + F.gelu(score) + F.gelu(score, approximate="tanh") + torch.sign(score) * score
)");
}

TEST(DerivativeOps, GuardedLoadsAreReadOnlyWhereTheForwardReadsThem) {
  // w has n = 8 elements and kv_idx runs to 15: w[kv_idx] is in range only under the guard.
  check_text("guarded load", R"(
w: Tensor[float32, 1]
n: int
def score_mod(score, b, h, q_idx, kv_idx):
    return where(kv_idx < n, w[kv_idx] * torch.tanh(score), score)
)", 8, 16);
}

}  // namespace

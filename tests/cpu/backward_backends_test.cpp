// cpu_attention_backward on its two back ends: with LLVM the mods and their derivatives
// (d score_mod / d score for every kept pair, the captured tensors' reached / indices /
// derivative) run as native code, with the interpreter they run through ir::evaluate; both must
// give the same dq, dk, dv, dsink and capture gradients bit for bit, on programs whose
// derivatives are not constants: softcap's tanh, ALiBi, a relative-position table, a learned
// sink, a `where` whose branches read different elements, a rank-0 tensor. The LLVM result is
// also checked against the float64 backward oracle, so bit-identity is not agreement on garbage.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/pipeline.hpp"
#include "cpu/attention.hpp"
#include "cpu/attention_backward.hpp"
#include "dsl/source.hpp"
#include "tests/support/reference_attention.hpp"
#include "tests/support/reference_backward.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using cpu::CpuBackend;

struct Shape {
  int B, Hq, Hkv, Tq, Tkv, D;
};

// One problem: a program, random q, k, v, dout, float tensors (with gradients unless listed in
// `no_grad`) and int scalars; forward for out and lse, then backward on a back end.
class Case {
 public:
  Case(const std::string& name, const std::string& text, Shape s)
      : program(compiler::build_ir(dsl::SourceFile(name + ".py", text))),
        shape(s),
        rng_(static_cast<std::uint32_t>(std::hash<std::string>{}(name))) {
    q = uniform(std::size_t(s.B) * s.Hq * s.Tq * s.D, -2.f, 2.f);
    k = uniform(std::size_t(s.B) * s.Hkv * s.Tkv * s.D, -2.f, 2.f);
    v = uniform(k.size(), -1.f, 1.f);
    dout = uniform(q.size(), -1.f, 1.f);
  }

  std::vector<float> uniform(std::size_t n, float lo, float hi) {
    std::vector<float> x(n);
    for (float& e : x) e = std::uniform_real_distribution<float>(lo, hi)(rng_);
    return x;
  }
  void bind(const std::string& name, std::vector<std::int64_t> dims, std::vector<float> values, bool grad = true) {
    floats_[name] = std::move(values);
    env.tensors[name] = {ir::DType::Float32, std::move(dims), {}, floats_[name].data()};
    if (grad) grad_names_.push_back(name);
  }
  void bind_scalar(const std::string& name, std::int64_t value) { env.scalars[name] = ir::Value::integer(value); }

  cpu::CpuAttentionInputs inputs() const {
    cpu::CpuAttentionInputs in;
    in.q = q.data(), in.k = k.data(), in.v = v.data();
    in.B = shape.B, in.Hq = shape.Hq, in.Hkv = shape.Hkv, in.Tq = shape.Tq, in.Tkv = shape.Tkv, in.D = shape.D;
    in.bindings = &env;
    return in;
  }

  struct Result {
    std::vector<float> dq, dk, dv, dsink;
    std::map<std::string, std::vector<float>> grads;
  };

  Result run(CpuBackend backend) const {
    const cpu::CpuAttentionInputs in = inputs();
    std::vector<float> out(q.size()), lse(std::size_t(shape.B) * shape.Hq * shape.Tq);
    cpu::cpu_attention_forward(program, in, out.data(), lse.data(), backend);
    Result r;
    const float nan = std::numeric_limits<float>::quiet_NaN();  // poisoned: an unwritten element shows
    r.dq.assign(q.size(), nan);
    r.dk.assign(k.size(), nan);
    r.dv.assign(k.size(), nan);
    cpu::CpuGradients g;
    g.dq = r.dq.data(), g.dk = r.dk.data(), g.dv = r.dv.data();
    if (program.sink) {
      r.dsink.assign(std::size_t(shape.B) * shape.Hq, nan);
      g.dsink = r.dsink.data();
    }
    for (const std::string& name : grad_names_) r.grads[name].assign(floats_.at(name).size(), nan);
    for (auto& [name, buffer] : r.grads) g.captures[name] = buffer.data();
    cpu::cpu_attention_backward(program, in, {out.data(), lse.data(), dout.data()}, g, backend);
    return r;
  }

  test::ReferenceGradients reference() const {
    test::ReferenceInputs in{q.data(), k.data(), v.data(), shape.B, shape.Hq, shape.Hkv, shape.Tq, shape.Tkv, shape.D};
    in.scale = 1.0 / std::sqrt(static_cast<double>(shape.D));
    in.env = &env;
    return test::reference_backward(program, in, dout.data());
  }

  ir::Program program;
  Shape shape;
  std::vector<float> q, k, v, dout;
  ir::Env env;

 private:
  std::mt19937 rng_;
  std::map<std::string, std::vector<float>> floats_;
  std::vector<std::string> grad_names_;
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  // An empty vector's data() may be null, which memcmp must not be given even for 0 bytes.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Interpreter and LLVM bit for bit; LLVM against the oracle; every asked-for gradient nonzero
// somewhere (so the scatter ran).
void expect_backends_agree(const Case& c) {
  const Case::Result llvm = c.run(CpuBackend::Llvm);
  const Case::Result interp = c.run(CpuBackend::Interpreter);
  EXPECT_TRUE(same_bits(llvm.dq, interp.dq)) << "dq";
  EXPECT_TRUE(same_bits(llvm.dk, interp.dk)) << "dk";
  EXPECT_TRUE(same_bits(llvm.dv, interp.dv)) << "dv";
  EXPECT_TRUE(same_bits(llvm.dsink, interp.dsink)) << "dsink";
  ASSERT_EQ(llvm.grads.size(), interp.grads.size());
  for (const auto& [name, g] : llvm.grads) {
    EXPECT_TRUE(same_bits(g, interp.grads.at(name))) << "d " << name;
    bool nonzero = false;
    for (float e : g) nonzero = nonzero || e != 0.0f;
    EXPECT_TRUE(nonzero) << "d " << name << " is all zeros";
  }

  const test::ReferenceGradients ref = c.reference();
  constexpr double kTolerance = 1e-5;
  EXPECT_LT(test::relative_l2(llvm.dq, ref.dq), kTolerance) << "dq";
  EXPECT_LT(test::relative_l2(llvm.dk, ref.dk), kTolerance) << "dk";
  EXPECT_LT(test::relative_l2(llvm.dv, ref.dv), kTolerance) << "dv";
  if (!ref.dsink.empty()) {
    EXPECT_LT(test::relative_l2(llvm.dsink, ref.dsink), kTolerance) << "dsink";
  }
  for (const auto& [name, g] : llvm.grads) {
    ASSERT_TRUE(ref.captures.count(name)) << name;
    EXPECT_LT(test::relative_l2(g, ref.captures.at(name)), kTolerance) << "d " << name;
  }
}

TEST(CpuBackwardBackends, SoftcapTanh) {
  SKIP_WITHOUT_LLVM();
  // CAP = 2 keeps tanh far from linear on these scores: the slope varies pair by pair.
  Case c("softcap_2", R"(
CAP = 2.0
def score_mod(score, b, h, q_idx, kv_idx):
    return CAP * torch.tanh(score / CAP)
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
)",
         {2, 4, 2, 37, 41, 16});
  expect_backends_agree(c);
}

TEST(CpuBackwardBackends, AlibiSoftcapWindowAndTheSlopesGradient) {
  SKIP_WITHOUT_LLVM();
  const std::string text = R"(
window: int
alibi_slopes: Tensor[float32, 1]
CAP = 5.0
def score_mod(score, b, h, q_idx, kv_idx):
    s = score + alibi_slopes[h] * (kv_idx - q_idx)
    return CAP * torch.tanh(s / CAP)
def mask_mod(b, h, q_idx, kv_idx):
    return 0 <= q_idx - kv_idx < window
)";
  Case c("alibi_softcap_window", text, {1, 4, 2, 300, 300, 8});  // rows longer than a load_row chunk
  c.bind_scalar("window", 280);
  c.bind("alibi_slopes", {4}, {0.5f, 0.25f, -0.125f, 0.0625f});
  expect_backends_agree(c);
}

TEST(CpuBackwardBackends, RelativePositionTable) {
  SKIP_WITHOUT_LLVM();
  Case c("relative_position", R"(
MAX_DISTANCE = 16
rel_bias: Tensor[float32, 2]
def score_mod(score, b, h, q_idx, kv_idx):
    d = clamp(kv_idx - q_idx, -MAX_DISTANCE, MAX_DISTANCE)
    return score + rel_bias[h, d + MAX_DISTANCE]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
)",
         {2, 3, 3, 45, 45, 8});
  c.bind("rel_bias", {3, 33}, c.uniform(3 * 33, -1.f, 1.f));
  expect_backends_agree(c);
}

TEST(CpuBackwardBackends, LearnedSinkAndATensorBothModsRead) {
  SKIP_WITHOUT_LLVM();
  // head_scale is read by score_mod (per pair) and by the sink (per (b, h)): its gradient sums both.
  Case c("learned_sink", R"(
window: int
sinks: Tensor[float32, 1]
head_scale: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score * head_scale[h]
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) and (q_idx - kv_idx < window)
def sink(b, h):
    return torch.exp(sinks[h] * 0.5) + head_scale[h] * head_scale[h]
)",
         {2, 4, 2, 29, 29, 8});
  c.bind_scalar("window", 6);
  c.bind("sinks", {4}, {0.5f, -0.75f, 1.25f, 0.0f});
  c.bind("head_scale", {4}, {1.0f, 0.5f, -0.75f, 1.5f});
  expect_backends_agree(c);
}

TEST(CpuBackwardBackends, WhereWhoseBranchesReadDifferentElements) {
  SKIP_WITHOUT_LLVM();
  // Each load is reached on one side of a condition only; the second branch's index (q_idx - 20)
  // is negative wherever that branch is not taken, so evaluating it there would fail.
  Case c("where_branches", R"(
gate: Tensor[float32, 1]
bias: Tensor[float32, 2]
def score_mod(score, b, h, q_idx, kv_idx):
    near = torch.where(kv_idx > q_idx - 4, score * gate[h] + bias[h, kv_idx], torch.exp(score * 0.5))
    return torch.where(q_idx < 20, near, torch.sigmoid(score) - bias[h, q_idx - 20])
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
)",
         {1, 2, 2, 33, 33, 8});
  c.bind("gate", {2}, {0.75f, -1.25f});
  c.bind("bias", {2, 33}, c.uniform(2 * 33, -1.f, 1.f));
  expect_backends_agree(c);
}

TEST(CpuBackwardBackends, RankZeroTemperature) {
  SKIP_WITHOUT_LLVM();
  Case c("temperature", R"(
temperature: Tensor[float32, 0]
def score_mod(score, b, h, q_idx, kv_idx):
    return score / temperature + torch.log1p(torch.abs(score)) * 0.25
)",
         {1, 2, 1, 19, 23, 8});
  c.bind("temperature", {}, {0.8f});
  expect_backends_agree(c);
}

TEST(CpuBackwardBackends, WithoutCaptureGradientsOnlyTheSlopeRuns) {
  SKIP_WITHOUT_LLVM();
  // The same program with its tensor bound but no gradient asked for: dq, dk, dv still agree.
  Case c("alibi_no_grad", R"(
alibi_slopes: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return 3.0 * torch.tanh((score + alibi_slopes[h] * (kv_idx - q_idx)) / 3.0)
)",
         {1, 2, 2, 26, 26, 8});
  c.bind("alibi_slopes", {2}, {0.25f, -0.5f}, /*grad=*/false);
  expect_backends_agree(c);
}

}  // namespace

#include "tests/api/backward_case.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "api/program_impl.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

// The gradients are float32 roundings of float64 sums, but what they are computed from carries
// float32 rounding too: the forward's lse and out (|rel| ~ 6e-8), and the score that score_mod
// sees (one rounding of the dot product and one of the scale). Through P = exp(s - lse) and
// dS = P (dP - D) that is a few 1e-7 relative (L2 over a tensor; the largest seen is ~3e-7),
// so 1e-5 leaves a wide margin while any wrong term (a head, a key, a sign, a missing factor of
// the slope) moves the result by 1e-2 or more.
constexpr double kRelativeL2 = 1e-5;

std::vector<std::int64_t> dims4(int a, int b, int c, int d) { return {a, b, c, d}; }

}  // namespace

BackwardCase::BackwardCase(const std::string& n, Program p, BackwardShape s)
    : name(n), program(std::move(p)), shape(s), seed_(static_cast<unsigned>(std::hash<std::string>{}(n))) {
  std::mt19937 rng(seed_++);
  std::normal_distribution<float> normal(0.f, 1.f);
  auto draw = [&](std::size_t count) {
    std::vector<float> x(count);
    for (float& e : x) e = normal(rng);
    return x;
  };
  const std::size_t nq = std::size_t{1} * s.B * s.Hq * s.Tq * s.D, nkv = std::size_t{1} * s.B * s.Hkv * s.Tkv * s.D;
  const std::size_t nv = nkv / s.D * s.dv(), no = nq / s.D * s.dv();
  q = draw(nq);
  k = draw(nkv);
  v = draw(nv);
  dout = uniform(no, -1.f, 1.f);
}

std::vector<float> BackwardCase::uniform(std::size_t n, float lo, float hi) {
  std::mt19937 rng(seed_++);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> x(n);
  for (float& e : x) e = u(rng);
  return x;
}

void BackwardCase::bind_scalar(const std::string& n, long long value) { scalars_[n] = value; }

void BackwardCase::bind_floats(const std::string& n, std::vector<std::int64_t> s, std::vector<float> values,
                               bool with_gradient) {
  floats[n] = std::move(values);
  if (with_gradient) grads[n].assign(floats[n].size(), NAN);  // NaN: a gradient left unwritten shows
  shapes_[n] = std::move(s);
}

void BackwardCase::bind_ints(const std::string& n, std::vector<std::int64_t> s, std::vector<std::int32_t> values) {
  ints_[n] = std::move(values);
  shapes_[n] = std::move(s);
}

TensorView BackwardCase::q_shaped(const std::vector<float>& x) const {
  return TensorView::contiguous(x.data(), f32, dims4(shape.B, shape.Hq, shape.Tq, shape.D), Device::cpu());
}
TensorView BackwardCase::kv_shaped(const std::vector<float>& x) const {
  return TensorView::contiguous(x.data(), f32, dims4(shape.B, shape.Hkv, shape.Tkv, shape.D), Device::cpu());
}
TensorView BackwardCase::o_shaped(const std::vector<float>& x) const {
  return TensorView::contiguous(x.data(), f32, dims4(shape.B, shape.Hq, shape.Tq, shape.dv()), Device::cpu());
}
TensorView BackwardCase::v_shaped(const std::vector<float>& x) const {
  return TensorView::contiguous(x.data(), f32, dims4(shape.B, shape.Hkv, shape.Tkv, shape.dv()), Device::cpu());
}

std::map<std::string, Binding> BackwardCase::bindings() const {
  std::map<std::string, Binding> out;
  for (const auto& [n, value] : scalars_) out[n] = value;
  for (const auto& [n, x] : floats) out[n] = TensorView::contiguous(x.data(), f32, shapes_.at(n), Device::cpu());
  for (const auto& [n, x] : ints_) out[n] = TensorView::contiguous(x.data(), i32, shapes_.at(n), Device::cpu());
  return out;
}

void BackwardCase::run(CpuBackend backend) {
  const Kernel kernel =
      engine().compile(program, {.head_dim = shape.D, .head_dim_v = shape.Dv, .dtype = f32, .device = Device::cpu(),
                                 .cpu_backend = backend});
  out.assign(dout.size(), NAN);
  lse.assign(std::size_t{1} * shape.B * shape.Hq * shape.Tq, NAN);
  dq.assign(q.size(), NAN);
  dk.assign(k.size(), NAN);
  dv.assign(v.size(), NAN);
  const TensorView lse_view =
      TensorView::contiguous(lse.data(), f32, {shape.B, shape.Hq, shape.Tq}, Device::cpu());
  ForwardOptions forward{.lse = lse_view, .bind = bindings()};
  forward.q_offset = shape.q_offset, forward.kv_offset = shape.kv_offset;
  kernel.forward(q_shaped(q), kv_shaped(k), v_shaped(v), o_shaped(out), forward);
  BackwardOptions options{.bind = bindings(), .q_offset = shape.q_offset, .kv_offset = shape.kv_offset};
  for (auto& [n, g] : grads) options.grads[n] = TensorView::contiguous(g.data(), f32, shapes_.at(n), Device::cpu());
  kernel.backward(q_shaped(q), kv_shaped(k), v_shaped(v), o_shaped(out), lse_view, o_shaped(dout), q_shaped(dq),
                  kv_shaped(dk), v_shaped(dv), options);
}

ReferenceGradients BackwardCase::reference() const {
  ir::Env env;
  for (const auto& [n, value] : scalars_) env.scalars[n] = ir::Value::integer(value);
  for (const auto& [n, x] : floats) env.tensors[n] = {ir::DType::Float32, shapes_.at(n), {}, x.data()};
  for (const auto& [n, x] : ints_) env.tensors[n] = {ir::DType::Int32, shapes_.at(n), {}, x.data()};
  ReferenceInputs in{q.data(), k.data(), v.data(), shape.B, shape.Hq, shape.Hkv, shape.Tq, shape.Tkv, shape.D};
  in.scale = 1.0 / std::sqrt(static_cast<double>(shape.D));
  in.env = &env;
  in.Dv = shape.Dv;
  in.q_offset = shape.q_offset, in.kv_offset = shape.kv_offset;
  return reference_backward(detail::ProgramAccess::impl(program).ir, in, dout.data());
}

ReferenceGradients expect_matches_reference(BackwardCase& c) {
  const ReferenceGradients ref = c.reference();
  EXPECT_LT(relative_l2(c.dq, ref.dq), kRelativeL2) << c.name << ": dq";
  EXPECT_LT(relative_l2(c.dk, ref.dk), kRelativeL2) << c.name << ": dk";
  EXPECT_LT(relative_l2(c.dv, ref.dv), kRelativeL2) << c.name << ": dv";
  std::set<std::string> asked, has;
  for (const auto& entry : c.grads) asked.insert(entry.first);
  for (const auto& entry : ref.captures) has.insert(entry.first);
  EXPECT_EQ(asked, has) << c.name << ": the tensors with gradients";
  for (const auto& [n, g] : c.grads) {
    if (!ref.captures.count(n)) continue;
    EXPECT_LT(relative_l2(g, ref.captures.at(n)), kRelativeL2) << c.name << ": d " << n;
  }
  return ref;
}

}  // namespace flexjit::test

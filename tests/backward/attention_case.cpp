#include "tests/backward/attention_case.hpp"

#include <cmath>
#include <functional>
#include <random>

#include "compiler/pipeline.hpp"
#include "dsl/source.hpp"

namespace backward_test {

namespace ir = flexjit::ir;

AttentionCase::AttentionCase(std::string n, const std::string& program_text, Shape s)
    : name(std::move(n)),
      program(flexjit::compiler::build_ir(flexjit::dsl::SourceFile(name + ".py", program_text))),
      shape(s),
      seed_(static_cast<std::uint32_t>(std::hash<std::string>{}(name))) {
  const std::size_t rows_q = static_cast<std::size_t>(s.B) * s.Hq * s.Tq * s.D;
  const std::size_t rows_kv = static_cast<std::size_t>(s.B) * s.Hkv * s.Tkv * s.D;
  q = random(rows_q, -1.5f, 1.5f);
  k = random(rows_kv, -1.5f, 1.5f);
  v = random(rows_kv, -1.5f, 1.5f);
  dout = random(rows_q, -1.0f, 1.0f);
}

std::vector<float> AttentionCase::random(std::size_t n, float lo, float hi) {
  std::mt19937 rng(seed_++);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = u(rng);
  return out;
}

void AttentionCase::bind_float(const std::string& n, std::vector<std::int64_t> s, std::vector<float> data) {
  shapes_[n] = std::move(s);
  floats[n] = std::move(data);
}

void AttentionCase::bind_int(const std::string& n, std::vector<std::int64_t> s, std::vector<std::int32_t> data) {
  shapes_[n] = std::move(s);
  ints_[n] = std::move(data);
}

void AttentionCase::bind_scalar(const std::string& n, std::int64_t value) { env_.scalars[n] = ir::Value::integer(value); }

flexjit::test::ReferenceInputs AttentionCase::inputs() {
  for (const auto& [n, data] : floats) env_.tensors[n] = {ir::DType::Float32, shapes_.at(n), {}, data.data()};
  for (const auto& [n, data] : ints_) env_.tensors[n] = {ir::DType::Int32, shapes_.at(n), {}, data.data()};
  flexjit::test::ReferenceInputs in;
  in.q = q.data();
  in.k = k.data();
  in.v = v.data();
  in.B = shape.B;
  in.Hq = shape.Hq;
  in.Hkv = shape.Hkv;
  in.Tq = shape.Tq;
  in.Tkv = shape.Tkv;
  in.D = shape.D;
  in.scale = 1.0 / std::sqrt(static_cast<double>(shape.D));
  in.env = &env_;
  return in;
}

double AttentionCase::loss() {
  const flexjit::test::ReferenceOutputs r = flexjit::test::reference_attention(program, inputs());
  double sum = 0;
  for (std::size_t e = 0; e < r.out.size(); ++e) sum += r.out[e] * dout[e];
  return sum;
}

}  // namespace backward_test

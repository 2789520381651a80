#pragma once
// One tiny attention problem for the backward tests: a program, its shapes, random q, k, v and
// dout, and the tensors it captures, all owned here so that a test can perturb any element.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"
#include "tests/support/reference_attention.hpp"

namespace backward_test {

struct Shape {
  int B = 1, Hq = 2, Hkv = 2, Tq = 7, Tkv = 7, D = 4;
};

class AttentionCase {
 public:
  // q, k, v uniform in [-1.5, 1.5], dout in [-1, 1], from a seed of the name.
  AttentionCase(std::string name, const std::string& program_text, Shape shape);

  void bind_float(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> data);
  void bind_int(const std::string& name, std::vector<std::int64_t> shape, std::vector<std::int32_t> data);
  void bind_scalar(const std::string& name, std::int64_t value);
  // Uniform in [lo, hi].
  std::vector<float> random(std::size_t n, float lo, float hi);

  // The inputs as the oracles take them; valid until the next bind_*.
  flexjit::test::ReferenceInputs inputs();
  double loss();  // sum(out * dout), out from reference_attention

  std::string name;
  flexjit::ir::Program program;
  Shape shape;
  std::vector<float> q, k, v, dout;
  std::map<std::string, std::vector<float>> floats;

 private:
  std::map<std::string, std::vector<std::int32_t>> ints_;
  std::map<std::string, std::vector<std::int64_t>> shapes_;
  flexjit::ir::Env env_;
  std::uint32_t seed_;
};

}  // namespace backward_test

// One backward problem for the API tests: a program, its shapes, random q, k, v and dout, the
// tensors it binds (and which of them get gradients), run forward then backward through a cpu
// kernel, next to the float64 oracle (tests/support/reference_backward.hpp) on the same inputs.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "tests/support/reference_backward.hpp"

namespace flexjit::test {

struct BackwardShape {
  int B = 1, Hq = 2, Hkv = 2, Tq = 19, Tkv = 19, D = 8;
  int Dv = 0;  // of v, out and dout (CompileOptions::head_dim_v); 0: D
  int dv() const { return Dv > 0 ? Dv : D; }
  std::int64_t q_offset = 0, kv_offset = 0;  // global positions of the calls (ForwardOptions)
};

class BackwardCase {
 public:
  // q, k, v normal(0, 1), dout uniform in [-1, 1], seeded by the name.
  BackwardCase(const std::string& name, Program program, BackwardShape shape);

  void bind_scalar(const std::string& name, long long value);
  // with_gradient: BackwardOptions::grads asks for its gradient.
  void bind_floats(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values,
                   bool with_gradient);
  void bind_ints(const std::string& name, std::vector<std::int64_t> shape, std::vector<std::int32_t> values);
  std::vector<float> uniform(std::size_t n, float lo, float hi);

  // forward (out, lse), then backward (dq, dk, dv, grads) through a cpu kernel of head dim D.
  void run(CpuBackend backend = CpuBackend::automatic);
  // The oracle on the same inputs and dout.
  ReferenceGradients reference() const;

  // Views of this case's arrays in its shapes.
  TensorView q_shaped(const std::vector<float>& x) const;   // [B, Hq, Tq, D]
  TensorView kv_shaped(const std::vector<float>& x) const;  // [B, Hkv, Tkv, D]
  TensorView o_shaped(const std::vector<float>& x) const;   // [B, Hq, Tq, Dv]: out, dout
  TensorView v_shaped(const std::vector<float>& x) const;   // [B, Hkv, Tkv, Dv]
  std::map<std::string, Binding> bindings() const;

  std::string name;
  Program program;
  BackwardShape shape;
  std::vector<float> q, k, v, dout, out, lse, dq, dk, dv;
  std::map<std::string, std::vector<float>> floats, grads;  // grads: one per bind_floats(.., true)

 private:
  std::map<std::string, std::vector<std::int32_t>> ints_;
  std::map<std::string, std::vector<std::int64_t>> shapes_;
  std::map<std::string, long long> scalars_;
  unsigned seed_;
};

// Compares dq, dk, dv and every requested gradient with the oracle (and that the oracle has a
// gradient for exactly the tensors asked for); returns the oracle's result.
ReferenceGradients expect_matches_reference(BackwardCase& c);

}  // namespace flexjit::test

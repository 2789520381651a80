#pragma once
// One CPU attention problem (random q, k, v of a shape, with bindings) and the checks every CPU
// attention test makes: against the float64 reference, and backend against backend.
#include <limits>
#include <random>
#include <vector>

#include "cpu/attention.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace cpu_test {

using namespace flexjit;

struct Shape {
  int B, Hq, Hkv, Tq, Tkv, D;
};

struct Output {
  std::vector<float> out, lse;
};

// Random q, k, v for a shape, kept alive with the inputs that point into them.
struct Problem {
  Shape shape;
  std::vector<float> q, k, v;
  cpu::CpuAttentionInputs in;

  Problem(Shape s, const ir::Env* env, std::mt19937_64& rng, float scale = std::numeric_limits<float>::quiet_NaN());
  Output run(const ir::Program& p, cpu::CpuBackend backend) const;
};

// out within 1e-5 relative L2, lse within 1e-5, masked rows exactly (0, -inf); returns the
// number of fully masked rows seen.
int expect_matches_reference(const ir::Program& p, const Problem& pb, const Output& got);

void expect_identical(const Output& a, const Output& b);

}  // namespace cpu_test

#pragma once
// Checks ir::differentiate against central finite differences of the mod itself, both evaluated
// by the interpreter (the language's specification).
//
// The interpreter computes in IEEE fp32 only, so the differences are taken in fp32 with a step
// suited to it: h = 2^-8 * max(1, |t|) around the value t perturbed (the score, or one element of
// a float32 tensor), the actual step being the difference of the two fp32 arguments. The error of
// such a difference has two parts, and the tolerance is their sum plus 1e-4 of the derivative's
// size (the fp32 rounding of the derivative expression itself):
//   rounding:   4 ulp of each f value, divided by the step (the mods are a few ops, each off by
//               at most half an ulp; 4 leaves room for their sum);
//   truncation: estimated per point by Richardson: |D(2h) - D(h)| / 3 approximates D(h)'s error.
// A point where the truncation estimate exceeds 1e-3 of the derivative's size straddles a kink
// (abs, min, a where) or curves too fast to judge: it is skipped and counted, and a check fails
// if more than a tenth of its comparisons are skipped. So the tolerance stays near 1e-3 relative
// and a derivative off by 1% fails (derivative_test asserts it does).
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace ir_test {

// The tensors and scalars a mod reads, owned here so that the checker can perturb an element.
struct Bindings {
  std::map<std::string, std::vector<float>> floats;      // float32 tensors, row-major
  std::map<std::string, std::vector<std::int32_t>> ints;  // int32 tensors, row-major
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::map<std::string, flexjit::ir::Value> scalars;

  void add_float(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> data);
  void add_int(const std::string& name, std::vector<std::int64_t> shape, std::vector<std::int32_t> data);
  flexjit::ir::Env env() const;  // points into the vectors above: rebuild after adding
};

// Every capture of p bound to random values: float32 tensors uniform in [lo, hi], int32 tensors
// zero; rank 1 has `n` elements, rank 2 is [n_heads, n]. Runtime int scalars are bound to `n`.
Bindings random_bindings(const flexjit::ir::Program& p, std::int64_t n_heads, std::int64_t n, std::mt19937& rng,
                         float lo = -1.0f, float hi = 1.0f);

struct Point {
  std::int64_t b = 0, h = 0, q_idx = 0, kv_idx = 0;
  float score = 0.0f;
};

struct CheckStats {
  int compared = 0;  // comparisons judged
  int failed = 0;    // of those, outside the tolerance
  int skipped = 0;   // kinks: not judged
  std::string first_failure;
};

// For each point: d mod / d score, and d mod / d element for every element of every float32
// tensor (all of them for tensors of up to 128 elements, else the elements read plus 8 others),
// against finite differences. The analytic value is d + distort * max(|d|, 1), to show that a
// wrong derivative fails the same check (distort = 0 for the real check).
CheckStats check_derivatives(const flexjit::ir::Mod& mod, Bindings& bindings, const std::vector<Point>& points,
                             double distort = 0.0);

// `n` points: b in [0, 2), h in [0, heads), q_idx and kv_idx in [0, positions), score uniform in
// [-score_range, score_range].
std::vector<Point> random_points(int n, std::int64_t heads, std::int64_t positions, float score_range, std::mt19937& rng);

// Asserts (gtest) that the real check passes with few skips and that a 1% distortion fails.
void expect_derivatives_match(const std::string& name, const flexjit::ir::Mod& mod, Bindings& bindings,
                              const std::vector<Point>& points);

}  // namespace ir_test

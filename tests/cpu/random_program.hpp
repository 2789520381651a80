#pragma once
// Random well-typed expressions and random bindings for comparing the LLVM back end with the
// interpreter. The declarations cover every scalar type and every tensor dtype, ranks 1 to 3,
// contiguous and strided layouts; the expressions cover every node kind, operator and intrinsic,
// extreme constants (INT64_MIN, NaN, -0.0, inf, 2^63 as float), lets, guarded loads and loads
// that may go out of range.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace cpu_test {

using namespace flexjit;

// A captured tensor of the random declarations: shape and strides (empty = contiguous).
struct TensorSpec {
  std::string name;
  ir::DType dtype;
  std::vector<std::int64_t> shape, strides;
};
const std::vector<TensorSpec>& random_tensors();
// Scalars n, m (int), x, y (float), c (bool) and one capture per random_tensors() entry.
ir::Program random_decls();

class ExprGenerator {
 public:
  explicit ExprGenerator(std::uint64_t seed) : rng_(seed) {}
  ir::Expr gen(ir::Type t, int depth);
  std::mt19937_64& rng() { return rng_; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

 private:
  ir::Expr leaf(ir::Type t);
  ir::Expr node(ir::Type t, int depth);
  ir::Expr op(ir::Type t, int depth);
  ir::Expr load(ir::Type t, int depth);
  ir::Expr index(std::int64_t extent, int depth);

  std::mt19937_64 rng_;
  std::vector<std::pair<std::string, ir::Type>> lets_;  // in scope
  int next_let_ = 0;
};

// Random values for a program's declarations: owns the tensor bytes env points into.
class RandomWorld {
 public:
  // For random_decls(): tensors as random_tensors() describes, values including extremes.
  static RandomWorld for_random_decls(std::mt19937_64& rng);
  // For any program: every capture contiguous with each extent `extent`, values in a "sensible"
  // range (ints in [0, 4), floats in [-2, 2]); ints scalars in [1, 64], floats in [0.5, 50].
  static RandomWorld for_program(const ir::Program& p, std::int64_t extent, std::mt19937_64& rng);

  RandomWorld() = default;
  RandomWorld(RandomWorld&&) = default;
  RandomWorld& operator=(RandomWorld&&) = default;

  // Random b, h, q_idx, kv_idx in [0, 2^31) (mostly small) and a random score, extremes included.
  void randomize_params(std::mt19937_64& rng);
  ir::Env env;

 private:
  std::vector<std::vector<unsigned char>> storage_;
};

}  // namespace cpu_test

#pragma once
// Random well-typed mask expressions over b, h, q_idx, kv_idx, runtime scalars and small captured
// tensors, covering every node kind the analysis handles (and some it does not), for fuzzing the
// analyses against the interpreter.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace flexjit::analysis_test {

class ExprGen {
 public:
  // `tame`: small constants, multiplications by small constants and short shifts only, so no
  // Int arithmetic wraps (what kv_range assumes). Otherwise extremes (INT64_MIN, 2^62, ...) appear.
  ExprGen(std::mt19937_64& rng, bool tame) : rng_(rng), tame_(tame) {}

  ir::Expr int_expr(int depth);
  ir::Expr bool_expr(int depth);

  // The declarations every generated expression may use: scalars s (int), flag (bool), x (float);
  // tensors ti (int32), tl (int64), tb (int8), tu (uint8), tm (bool), tf (float32), all rank 1.
  static std::vector<ir::Scalar> scalars();
  static std::vector<ir::Capture> captures();

 private:
  ir::Expr int_leaf();
  ir::Expr bool_leaf();
  ir::Expr index();
  ir::Expr float_expr(int depth);
  ir::Expr let(int depth, ir::Type t);
  std::int64_t pick(std::int64_t lo, std::int64_t hi);

  std::mt19937_64& rng_;
  bool tame_;
  int next_let_ = 0;
  struct Bound {
    std::string name;
    ir::Type type;
  };
  std::vector<Bound> lets_;  // Let vars in scope
};

}  // namespace flexjit::analysis_test

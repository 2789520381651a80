#include "tests/analysis/random_expr.hpp"

#include <limits>

#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {

using ir::BinaryOp;
using ir::CompareOp;
using ir::DType;
using ir::Expr;
using ir::Type;

std::vector<ir::Scalar> ExprGen::scalars() {
  return {{"s", Type::Int, {}}, {"flag", Type::Bool, {}}, {"x", Type::Float, {}}};
}

std::vector<ir::Capture> ExprGen::captures() {
  return {{"ti", DType::Int32, 1, {}}, {"tl", DType::Int64, 1, {}}, {"tb", DType::Int8, 1, {}},
          {"tu", DType::UInt8, 1, {}}, {"tm", DType::Bool, 1, {}},  {"tf", DType::Float32, 1, {}}};
}

std::int64_t ExprGen::pick(std::int64_t lo, std::int64_t hi) { return uniform(rng_, lo, hi); }

Expr ExprGen::index() {
  switch (pick(0, 3)) {
    case 0: return q();
    case 1: return kv();
    case 2: return bv();
    default: return hv();
  }
}

Expr ExprGen::int_leaf() {
  // Let vars in scope first, sometimes.
  if (!lets_.empty() && pick(0, 3) == 0) {
    const Bound& b = lets_[pick(0, static_cast<std::int64_t>(lets_.size()) - 1)];
    if (b.type == Type::Int) return let_var(b.name, Type::Int);
  }
  switch (pick(0, 11)) {
    case 0:
    case 1: return q();
    case 2:
    case 3: return kv();
    case 4: return bv();
    case 5: return hv();
    case 6: return int_scalar("s");
    case 7: {
      static constexpr DType kInts[] = {DType::Int32, DType::Int64, DType::Int8, DType::UInt8};
      static const char* kNames[] = {"ti", "tl", "tb", "tu"};
      const auto i = pick(0, 3);
      return load(kNames[i], kInts[i], {index()});
    }
    default: {
      if (!tame_ && pick(0, 5) == 0) {
        static constexpr std::int64_t kBig[] = {std::numeric_limits<std::int64_t>::min(),
                                                std::numeric_limits<std::int64_t>::max(),
                                                std::int64_t{1} << 62, -(std::int64_t{1} << 62),
                                                std::int64_t{1} << 31, -(std::int64_t{1} << 31) - 1};
        return c(kBig[pick(0, 5)]);
      }
      return c(pick(-8, 70));
    }
  }
}

Expr ExprGen::bool_leaf() {
  if (!lets_.empty() && pick(0, 3) == 0) {
    const Bound& b = lets_[pick(0, static_cast<std::int64_t>(lets_.size()) - 1)];
    if (b.type == Type::Bool) return let_var(b.name, Type::Bool);
  }
  switch (pick(0, 4)) {
    case 0: return ir::BoolImm::make(pick(0, 1) == 1);
    case 1: return bool_scalar("flag");
    case 2: return load("tm", DType::Bool, {index()});
    default: return cmp(static_cast<CompareOp>(pick(0, 5)), int_leaf(), int_leaf());
  }
}

Expr ExprGen::float_expr(int depth) {
  switch (pick(0, 3)) {
    case 0: return ir::Var::make("x", Type::Float, ir::VarKind::Scalar);
    case 1: return load("tf", DType::Float32, {index()});
    case 2: return ir::Cast::make(Type::Float, depth > 0 ? int_expr(depth - 1) : int_leaf());
    default:
      return ir::Binary::make(BinaryOp::Mul, ir::FloatImm::make(0.5 * static_cast<double>(pick(-4, 4))),
                              ir::Cast::make(Type::Float, int_leaf()));
  }
}

Expr ExprGen::let(int depth, Type t) {
  const std::string name = "l" + std::to_string(next_let_++);
  const Type vt = pick(0, 1) ? Type::Int : Type::Bool;
  Expr value = vt == Type::Int ? int_expr(depth - 1) : bool_expr(depth - 1);
  lets_.push_back({name, vt});
  Expr body = t == Type::Int ? int_expr(depth - 1) : bool_expr(depth - 1);
  lets_.pop_back();
  return ir::Let::make(name, value, body);
}

Expr ExprGen::int_expr(int depth) {
  if (depth <= 0 || pick(0, 4) == 0) return int_leaf();
  const int d = depth - 1;
  switch (pick(0, 21)) {
    case 0:
    case 1: return int_expr(d) + int_expr(d);
    case 2:
    case 3: return int_expr(d) - int_expr(d);
    case 4:
      if (tame_) return int_expr(d) * c(pick(-3, 3));
      return int_expr(d) * int_expr(d);
    case 5:
    case 6: return fdiv(int_expr(d), pick(0, 1) ? c(pick(-9, 9)) : int_expr(d));
    case 7:
    case 8: return mod(int_expr(d), pick(0, 1) ? c(pick(-9, 9)) : int_expr(d));
    case 9: return bin(BinaryOp::Min, int_expr(d), int_expr(d));
    case 10: return bin(BinaryOp::Max, int_expr(d), int_expr(d));
    case 11: return bin(static_cast<BinaryOp>(static_cast<int>(BinaryOp::BitAnd) + pick(0, 2)), int_expr(d), int_expr(d));
    case 12:
      if (tame_) return bin(BinaryOp::Shl, int_expr(d), c(pick(0, 3)));
      return bin(BinaryOp::Shl, int_expr(d), pick(0, 1) ? c(pick(-2, 70)) : int_expr(d));
    case 13: return bin(BinaryOp::Shr, int_expr(d), pick(0, 1) ? c(pick(-2, 70)) : int_expr(d));
    case 14: return bin(BinaryOp::Pow, int_leaf(), c(pick(0, tame_ ? 2 : 5)));
    case 15: return ir::Unary::make(ir::UnaryOp::Neg, int_expr(d));
    case 16: return ir::Unary::make(ir::UnaryOp::BitNot, int_expr(d));
    case 17: return ir::Call::make(ir::Intrinsic::Abs, {int_expr(d)});
    case 18: return ir::Select::make(bool_expr(d), int_expr(d), int_expr(d));
    case 19: return ir::Cast::make(Type::Int, bool_expr(d));
    case 20:
      if (tame_) return int_leaf();
      return ir::Call::make(pick(0, 1) ? ir::Intrinsic::FloorToInt : ir::Intrinsic::CeilToInt, {float_expr(d)});
    default: return let(depth, Type::Int);
  }
}

Expr ExprGen::bool_expr(int depth) {
  if (depth <= 0 || pick(0, 5) == 0) return bool_leaf();
  const int d = depth - 1;
  switch (pick(0, 13)) {
    case 0:
    case 1:
    case 2: return cmp(static_cast<CompareOp>(pick(0, 5)), int_expr(d), int_expr(d));
    case 3: return bool_expr(d) && bool_expr(d);
    case 4: return bool_expr(d) || bool_expr(d);
    case 5: return bool_expr(d) & bool_expr(d);
    case 6: return bool_expr(d) | bool_expr(d);
    case 7: return bin(BinaryOp::BitXor, bool_expr(d), bool_expr(d));
    case 8: return !bool_expr(d);
    case 9: return ir::Select::make(bool_expr(d), bool_expr(d), bool_expr(d));
    case 10: return ir::Cast::make(Type::Bool, int_expr(d));
    case 11: return cmp(static_cast<CompareOp>(pick(0, 5)), bool_expr(d), bool_expr(d));
    case 12: return cmp(static_cast<CompareOp>(pick(0, 5)), float_expr(d), float_expr(d));
    default: return let(depth, Type::Bool);
  }
}

}  // namespace flexjit::analysis_test

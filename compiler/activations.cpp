#include "compiler/activations.hpp"

#include <cmath>
#include <numbers>

#include "compiler/python_ops.hpp"

namespace flexjit::compiler {

using ir::Type;

namespace {

ir::Expr number_like(const ir::Expr& x, double v, dsl::SourcePos pos) {
  return x.type() == Type::Float ? ir::FloatImm::make(v, pos) : ir::IntImm::make(static_cast<std::int64_t>(v), pos);
}
ir::Expr less(const ir::Expr& a, const ir::Expr& b, dsl::SourcePos pos) { return ir::Compare::make(ir::CompareOp::LT, a, b, pos); }
ir::Expr mul(const ir::Expr& a, const ir::Expr& b, dsl::SourcePos pos) { return ir::Binary::make(ir::BinaryOp::Mul, a, b, pos); }
ir::Expr add(const ir::Expr& a, const ir::Expr& b, dsl::SourcePos pos) { return ir::Binary::make(ir::BinaryOp::Add, a, b, pos); }
ir::Expr integral(const ir::Expr& x, dsl::SourcePos pos) { return x.type() == Type::Bool ? cast_to(Type::Int, x, pos) : x; }

}  // namespace

ir::Expr sign_of(const ir::Expr& value, dsl::SourcePos pos) {
  const ir::Expr x = integral(value, pos);
  const ir::Expr zero = number_like(x, 0, pos);
  return ir::Select::make(less(zero, x, pos), number_like(x, 1, pos),
                          ir::Select::make(less(x, zero, pos), number_like(x, -1, pos), x, pos), pos);
}

ir::Expr relu(const ir::Expr& value, dsl::SourcePos pos) {
  const ir::Expr x = integral(value, pos);
  return ir::Select::make(less(x, number_like(x, 0, pos), pos), number_like(x, 0, pos), x, pos);
}

ir::Expr silu(const ir::Expr& x, dsl::SourcePos pos) {
  const ir::Expr f = cast_to(Type::Float, x, pos);
  return mul(f, ir::Call::make(ir::Intrinsic::Sigmoid, {f}, pos), pos);
}

ir::Expr softplus(const ir::Expr& x, const ir::Expr& beta, const ir::Expr& threshold, dsl::SourcePos pos) {
  const ir::Expr f = cast_to(Type::Float, x, pos);
  const ir::Expr bx = mul(beta, f, pos);
  const ir::Expr soft = ir::Binary::make(
      ir::BinaryOp::Div, ir::Call::make(ir::Intrinsic::Log1p, {ir::Call::make(ir::Intrinsic::Exp, {bx}, pos)}, pos),
      beta, pos);
  return ir::Select::make(less(threshold, bx, pos), f, soft, pos);
}

ir::Expr gelu(const ir::Expr& x, bool tanh_form, dsl::SourcePos pos) {
  auto num = [&](double v) { return ir::FloatImm::make(v, pos); };
  const ir::Expr f = cast_to(Type::Float, x, pos);
  ir::Expr inner;
  if (tanh_form) {
    const ir::Expr cubic = add(f, mul(num(0.044715), mul(f, mul(f, f, pos), pos), pos), pos);
    inner = ir::Call::make(ir::Intrinsic::Tanh, {mul(num(std::sqrt(2.0 / std::numbers::pi)), cubic, pos)}, pos);
  } else {
    inner = ir::Call::make(ir::Intrinsic::Erf, {mul(f, num(1.0 / std::numbers::sqrt2), pos)}, pos);
  }
  return mul(mul(num(0.5), f, pos), add(num(1.0), inner, pos), pos);
}

}  // namespace flexjit::compiler

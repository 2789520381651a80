#include "compiler/python_ops.hpp"

#include <fmt/format.h>

#include <optional>

#include "ir/simplify.hpp"

namespace flexjit::compiler {

using dsl::SourcePos;
using dsl::ast::BinOp;
using dsl::ast::CmpOp;
using dsl::ast::UnOp;
using ir::Type;

ir::Expr cast_to(Type t, const ir::Expr& e, SourcePos pos) {
  if (e.type() == t) return e;
  return ir::Cast::make(t, e, pos);
}

Type arithmetic_type(Type a, Type b) {
  if (a == Type::Float || b == Type::Float) return Type::Float;
  return Type::Int;  // bool + bool is int in Python
}

ir::Expr truthy(const ir::Expr& e, SourcePos pos) { return cast_to(Type::Bool, e, pos); }

namespace {

std::string operand_error(BinOp op, const ir::Expr& a, const ir::Expr& b) {
  return fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", dsl::ast::spelling(op),
                     ir::type_name(a.type()), ir::type_name(b.type()));
}

bool is_nonnegative_int_constant(const ir::Expr& e) {
  if (auto i = e.as<ir::IntImm>()) return i->value >= 0;
  if (e.as<ir::BoolImm>()) return true;
  return false;
}

// The value of an operand known at compile time, as a double (bools as 0 / 1).
std::optional<double> constant_value(const ir::Expr& e) {
  ir::Expr c = ir::simplify(e);
  if (auto i = c.as<ir::IntImm>()) return static_cast<double>(i->value);
  if (auto f = c.as<ir::FloatImm>()) return f->value;
  if (auto b = c.as<ir::BoolImm>()) return b->value ? 1.0 : 0.0;
  return std::nullopt;
}

// Python raises for these; a kernel cannot, so a divisor or shift count known to be wrong when
// compiling is an error at the operator (a runtime one keeps the total values of docs/language.md).
void check_constant_operand(BinOp op, const ir::Expr& b, SourcePos pos, const ErrorSink& error) {
  const bool divides = op == BinOp::Div || op == BinOp::FloorDiv || op == BinOp::Mod;
  const bool shifts = op == BinOp::Shl || op == BinOp::Shr;
  if (!divides && !shifts) return;
  auto v = constant_value(b);
  if (!v) return;
  if (divides && *v == 0.0)
    error(pos, fmt::format("division by zero: the right operand of '{}' is always 0", dsl::ast::spelling(op)));
  if (shifts && *v < 0) error(pos, fmt::format("negative shift count {}", static_cast<long long>(*v)));
  if (shifts && *v > 63)
    error(pos, fmt::format("shift count {} is out of range: integers are 64-bit, counts go from 0 to 63",
                           static_cast<long long>(*v)));
}

ir::Expr arith(ir::BinaryOp op, const ir::Expr& a, const ir::Expr& b, SourcePos pos) {
  Type t = arithmetic_type(a.type(), b.type());
  return ir::Binary::make(op, cast_to(t, a, pos), cast_to(t, b, pos), pos);
}

}  // namespace

ir::Expr python_binary(BinOp op, const ir::Expr& a, const ir::Expr& b, SourcePos pos, const ErrorSink& error) {
  using ir::BinaryOp;
  check_constant_operand(op, b, pos, error);
  switch (op) {
    case BinOp::Add: return arith(BinaryOp::Add, a, b, pos);
    case BinOp::Sub: return arith(BinaryOp::Sub, a, b, pos);
    case BinOp::Mul: return arith(BinaryOp::Mul, a, b, pos);
    case BinOp::Div:  // true division: always float
      return ir::Binary::make(BinaryOp::Div, cast_to(Type::Float, a, pos), cast_to(Type::Float, b, pos), pos);
    case BinOp::FloorDiv: return arith(BinaryOp::FloorDiv, a, b, pos);
    case BinOp::Mod: return arith(BinaryOp::Mod, a, b, pos);
    case BinOp::Pow: {
      // int ** int stays int only when the exponent is a known non-negative constant;
      // otherwise Python may produce a float, so we compute in float.
      if (a.type() != Type::Float && b.type() != Type::Float && is_nonnegative_int_constant(b))
        return ir::Binary::make(BinaryOp::Pow, cast_to(Type::Int, a, pos), cast_to(Type::Int, b, pos), pos);
      return ir::Binary::make(BinaryOp::Pow, cast_to(Type::Float, a, pos), cast_to(Type::Float, b, pos), pos);
    }
    case BinOp::BitAnd:
    case BinOp::BitOr:
    case BinOp::BitXor: {
      if (a.type() == Type::Float || b.type() == Type::Float) error(pos, operand_error(op, a, b));
      auto iop = op == BinOp::BitAnd ? BinaryOp::BitAnd : op == BinOp::BitOr ? BinaryOp::BitOr : BinaryOp::BitXor;
      if (a.type() == Type::Bool && b.type() == Type::Bool) return ir::Binary::make(iop, a, b, pos);
      return ir::Binary::make(iop, cast_to(Type::Int, a, pos), cast_to(Type::Int, b, pos), pos);
    }
    case BinOp::Shl:
    case BinOp::Shr: {
      if (a.type() == Type::Float || b.type() == Type::Float) error(pos, operand_error(op, a, b));
      return ir::Binary::make(op == BinOp::Shl ? BinaryOp::Shl : BinaryOp::Shr, cast_to(Type::Int, a, pos),
                              cast_to(Type::Int, b, pos), pos);
    }
    case BinOp::MatMul: error(pos, "the matrix multiplication operator '@' is not supported"); break;
  }
  error(pos, "unsupported operator");
  return {};
}

ir::Expr python_unary(UnOp op, const ir::Expr& a, SourcePos pos, const ErrorSink& error) {
  switch (op) {
    case UnOp::Neg:
      return ir::Unary::make(ir::UnaryOp::Neg, a.type() == Type::Bool ? cast_to(Type::Int, a, pos) : a, pos);
    case UnOp::Pos: return a.type() == Type::Bool ? cast_to(Type::Int, a, pos) : a;
    case UnOp::Invert:
      if (a.type() == Type::Float) error(pos, "bad operand type for unary ~: 'float'");
      // PyTorch's ~ on a bool tensor is logical not (Python's ~True is -2, but mods follow PyTorch).
      if (a.type() == Type::Bool) return ir::Unary::make(ir::UnaryOp::Not, a, pos);
      return ir::Unary::make(ir::UnaryOp::BitNot, cast_to(Type::Int, a, pos), pos);
    case UnOp::Not: return ir::Unary::make(ir::UnaryOp::Not, truthy(a, pos), pos);
  }
  error(pos, "unsupported operator");
  return {};
}

ir::Expr python_compare(CmpOp op, const ir::Expr& a, const ir::Expr& b, SourcePos pos, const ErrorSink& error) {
  ir::CompareOp cop{};
  switch (op) {
    case CmpOp::Lt: cop = ir::CompareOp::LT; break;
    case CmpOp::Le: cop = ir::CompareOp::LE; break;
    case CmpOp::Gt: cop = ir::CompareOp::GT; break;
    case CmpOp::Ge: cop = ir::CompareOp::GE; break;
    case CmpOp::Eq: cop = ir::CompareOp::EQ; break;
    case CmpOp::Ne: cop = ir::CompareOp::NE; break;
    case CmpOp::Is:
    case CmpOp::IsNot:
      error(pos, fmt::format("'{}' compares object identity and is not supported on numbers; use '{}'",
                             dsl::ast::spelling(op), op == CmpOp::Is ? "==" : "!="));
      return {};
    case CmpOp::In:
    case CmpOp::NotIn:
      error(pos, fmt::format("the '{}' operator is not supported", dsl::ast::spelling(op)));
      return {};
  }
  // Python compares bool == bool without promotion; everything else compares as numbers.
  if (a.type() == Type::Bool && b.type() == Type::Bool) return ir::Compare::make(cop, a, b, pos);
  Type t = arithmetic_type(a.type(), b.type());
  return ir::Compare::make(cop, cast_to(t, a, pos), cast_to(t, b, pos), pos);
}

ir::Expr python_min_max(bool is_max, const ir::Expr& a, const ir::Expr& b, SourcePos pos) {
  return arith(is_max ? ir::BinaryOp::Max : ir::BinaryOp::Min, a, b, pos);
}

ir::Expr python_select(const ir::Expr& cond, const ir::Expr& a, const ir::Expr& b, SourcePos pos) {
  Type t = (a.type() == Type::Bool && b.type() == Type::Bool) ? Type::Bool : arithmetic_type(a.type(), b.type());
  return ir::Select::make(truthy(cond, pos), cast_to(t, a, pos), cast_to(t, b, pos), pos);
}

}  // namespace flexjit::compiler

#pragma once
// Terse IR construction for tests: `q - kv < w` builds Compare(LT, Binary(Sub, q, kv), w).
// Only for tests: the operators live in ir_test, never in flexjit::ir.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace ir_test {

using namespace flexjit::ir;

inline Expr i(std::int64_t v) { return IntImm::make(v); }
inline Expr f(double v) { return FloatImm::make(v); }
inline Expr B(bool v) { return BoolImm::make(v); }
inline Expr param(const char* name) {
  return Var::make(name, std::string(name) == kParamScore ? Type::Float : Type::Int, VarKind::Param);
}
inline Expr scalar(const std::string& name, Type t) { return Var::make(name, t, VarKind::Scalar); }
inline Expr let_var(const std::string& name, Type t) { return Var::make(name, t, VarKind::Let); }
inline Expr load(const std::string& t, DType d, std::vector<Expr> idx) { return Load::make(t, d, std::move(idx)); }
inline Expr cast(Type t, Expr v) { return Cast::make(t, std::move(v)); }
inline Expr select(Expr c, Expr a, Expr b) { return Select::make(std::move(c), std::move(a), std::move(b)); }
inline Expr call(Intrinsic fn, Expr a) { return Call::make(fn, {std::move(a)}); }
inline Expr let(const std::string& n, Expr v, Expr b) { return Let::make(n, std::move(v), std::move(b)); }
inline Expr bin(BinaryOp op, Expr a, Expr b) { return Binary::make(op, std::move(a), std::move(b)); }
inline Expr cmp(CompareOp op, Expr a, Expr b) { return Compare::make(op, std::move(a), std::move(b)); }
inline Expr un(UnaryOp op, Expr a) { return Unary::make(op, std::move(a)); }

inline Expr operator+(Expr a, Expr b) { return bin(BinaryOp::Add, a, b); }
inline Expr operator-(Expr a, Expr b) { return bin(BinaryOp::Sub, a, b); }
inline Expr operator*(Expr a, Expr b) { return bin(BinaryOp::Mul, a, b); }
inline Expr operator/(Expr a, Expr b) { return bin(BinaryOp::Div, a, b); }
inline Expr operator%(Expr a, Expr b) { return bin(BinaryOp::Mod, a, b); }
inline Expr operator&(Expr a, Expr b) { return bin(BinaryOp::BitAnd, a, b); }
inline Expr operator|(Expr a, Expr b) { return bin(BinaryOp::BitOr, a, b); }
inline Expr operator^(Expr a, Expr b) { return bin(BinaryOp::BitXor, a, b); }
inline Expr operator<<(Expr a, Expr b) { return bin(BinaryOp::Shl, a, b); }
inline Expr operator>>(Expr a, Expr b) { return bin(BinaryOp::Shr, a, b); }
inline Expr operator&&(Expr a, Expr b) { return bin(BinaryOp::And, a, b); }
inline Expr operator||(Expr a, Expr b) { return bin(BinaryOp::Or, a, b); }
inline Expr operator<(Expr a, Expr b) { return cmp(CompareOp::LT, a, b); }
inline Expr operator<=(Expr a, Expr b) { return cmp(CompareOp::LE, a, b); }
inline Expr operator>(Expr a, Expr b) { return cmp(CompareOp::GT, a, b); }
inline Expr operator>=(Expr a, Expr b) { return cmp(CompareOp::GE, a, b); }
inline Expr operator==(Expr a, Expr b) { return cmp(CompareOp::EQ, a, b); }
inline Expr operator!=(Expr a, Expr b) { return cmp(CompareOp::NE, a, b); }
inline Expr operator-(Expr a) { return un(UnaryOp::Neg, a); }
inline Expr operator~(Expr a) { return un(UnaryOp::BitNot, a); }
inline Expr operator!(Expr a) { return un(UnaryOp::Not, a); }
inline Expr floordiv(Expr a, Expr b) { return bin(BinaryOp::FloorDiv, a, b); }
inline Expr pow(Expr a, Expr b) { return bin(BinaryOp::Pow, a, b); }
inline Expr min(Expr a, Expr b) { return bin(BinaryOp::Min, a, b); }
inline Expr max(Expr a, Expr b) { return bin(BinaryOp::Max, a, b); }

// The usual parameters and names.
inline Expr b() { return param(kParamBatch); }
inline Expr h() { return param(kParamHead); }
inline Expr q() { return param(kParamQ); }
inline Expr kv() { return param(kParamKv); }
inline Expr score() { return param(kParamScore); }

constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace ir_test

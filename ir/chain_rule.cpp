// One case per operation. Every formula is written in the IR's own fp32 operations, so the
// interpreter evaluates derivatives with the same rounding as the mods themselves.
#include "ir/chain_rule.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "flexjit/error.hpp"
#include "ir/internal_error.hpp"

namespace flexjit::ir {
namespace {

// Builders that carry the differentiated node's position, so that anything reported about the
// derivative points at the program text it came from.
class Build {
 public:
  explicit Build(SourcePos p) : p_(p) {}
  Expr num(double v) const { return FloatImm::make(v, p_); }
  Expr add(const Expr& a, const Expr& b) const { return Binary::make(BinaryOp::Add, a, b, p_); }
  Expr sub(const Expr& a, const Expr& b) const { return Binary::make(BinaryOp::Sub, a, b, p_); }
  Expr mul(const Expr& a, const Expr& b) const { return Binary::make(BinaryOp::Mul, a, b, p_); }
  Expr div(const Expr& a, const Expr& b) const { return Binary::make(BinaryOp::Div, a, b, p_); }
  Expr pow(const Expr& a, const Expr& b) const { return Binary::make(BinaryOp::Pow, a, b, p_); }
  Expr neg(const Expr& a) const { return Unary::make(UnaryOp::Neg, a, p_); }
  Expr call(Intrinsic f, const Expr& a) const { return Call::make(f, {a}, p_); }
  Expr less(const Expr& a, const Expr& b) const { return Compare::make(CompareOp::LT, a, b, p_); }
  Expr greater(const Expr& a, const Expr& b) const { return Compare::make(CompareOp::GT, a, b, p_); }
  Expr is_nan(const Expr& a) const { return Compare::make(CompareOp::NE, a, a, p_); }
  Expr either(const Expr& a, const Expr& b) const { return Binary::make(BinaryOp::Or, a, b, p_); }
  // The adjoint where `c` holds, else zero.
  Expr where(const Expr& c, const Expr& x, const Expr& y) const { return Select::make(c, x, y, p_); }

 private:
  SourcePos p_;
};

std::string at_line(SourcePos p) {
  if (!p.known()) return "";
  return " (line " + std::to_string(p.line) + ", column " + std::to_string(p.col) + ")";
}

[[noreturn]] void cannot_differentiate(const char* what, const std::string& operation, SourcePos p,
                                       const std::string& hint) {
  throw UnsupportedError(std::string(what) + ": cannot differentiate " + operation + at_line(p) +
                         (hint.empty() ? "" : ": " + hint));
}

// fminf / fmaxf return the right operand when it is strictly better or the left one is NaN:
// the condition under which the right operand is the one taken.
Expr takes_right(const Build& m, BinaryOp op, const Expr& a, const Expr& b) {
  const Expr better = op == BinaryOp::Min ? m.less(b, a) : m.greater(b, a);
  return m.either(better, m.is_nan(a));
}

Expr binary_rule(const Binary* op, const Expr& e, std::size_t operand, const Expr& adj, const char* what) {
  const Build m(op->pos);
  const Expr& a = op->a;
  const Expr& b = op->b;
  const Expr zero = m.num(0.0);
  switch (op->op) {
    case BinaryOp::Add: return adj;
    case BinaryOp::Sub: return operand == 0 ? adj : m.neg(adj);
    case BinaryOp::Mul: return m.mul(adj, operand == 0 ? b : a);
    case BinaryOp::Div:  // d(a/b)/db = -(a/b)/b: reuses the quotient and cannot overflow before it does
      return operand == 0 ? m.div(adj, b) : m.neg(m.mul(adj, m.div(e, b)));
    case BinaryOp::FloorDiv: return {};  // floor(a / b) is piecewise constant
    case BinaryOp::Mod:                  // a - floor(a / b) * b, as the interpreter computes it
      return operand == 0 ? adj : m.neg(m.mul(adj, Binary::make(BinaryOp::FloorDiv, a, b, op->pos)));
    case BinaryOp::Pow:
      if (operand == 1)
        // d(x ** y)/dy = x ** y * log(x) exists only for x > 0, which the program does not say.
        cannot_differentiate(what, "'x ** y' with respect to the exponent y, which depends on the score or a captured tensor",
                             op->pos, "only a constant exponent is supported; write exp(y * log(x)) for x > 0");
      return m.mul(adj, m.mul(b, m.pow(a, m.sub(b, m.num(1.0)))));
    case BinaryOp::Min:
    case BinaryOp::Max: {
      const Expr right = takes_right(m, op->op, a, b);
      return operand == 0 ? m.where(right, zero, adj) : m.where(right, adj, zero);
    }
    default: break;
  }
  internal_error("chain_rule: a Float node with a non-float binary operator");
}

Expr call_rule(const Call* op, const Expr& e, const Expr& adj, const char* what) {
  const Build m(op->pos);
  const Expr& x = op->args[0];
  const Expr one = m.num(1.0);
  switch (op->fn) {
    case Intrinsic::Exp: return m.mul(adj, e);
    case Intrinsic::Exp2: return m.mul(adj, m.mul(e, m.num(std::numbers::ln2)));
    case Intrinsic::Log: return m.div(adj, x);
    case Intrinsic::Log2: return m.div(adj, m.mul(x, m.num(std::numbers::ln2)));
    case Intrinsic::Log1p: return m.div(adj, m.add(one, x));
    case Intrinsic::Sqrt: return m.div(adj, m.add(e, e));
    case Intrinsic::Rsqrt: return m.neg(m.mul(adj, m.div(m.mul(m.num(0.5), e), x)));  // -x^(-3/2) / 2
    case Intrinsic::Tanh:
    case Intrinsic::TanhApprox: return m.mul(adj, m.sub(one, m.mul(e, e)));
    case Intrinsic::Sigmoid: return m.mul(adj, m.mul(e, m.sub(one, e)));
    case Intrinsic::Sin: return m.mul(adj, m.call(Intrinsic::Cos, x));
    case Intrinsic::Cos: return m.neg(m.mul(adj, m.call(Intrinsic::Sin, x)));
    case Intrinsic::Tan: return m.mul(adj, m.add(one, m.mul(e, e)));
    case Intrinsic::Erf:
      return m.mul(adj, m.mul(m.num(2.0 / std::sqrt(std::numbers::pi)), m.call(Intrinsic::Exp, m.neg(m.mul(x, x)))));
    case Intrinsic::Abs: return m.where(m.less(x, m.num(0.0)), m.neg(adj), adj);
    case Intrinsic::Floor:
    case Intrinsic::Ceil: return {};
    case Intrinsic::FloorToInt:
    case Intrinsic::CeilToInt: break;  // Int results: no adjoint reaches them
  }
  cannot_differentiate(what, std::string("the call ") + intrinsic_name(op->fn), op->pos, "");
}

}  // namespace

Expr chain_rule(const Expr& e, std::size_t operand, const Expr& adjoint, const char* what) {
  internal_assert(e.type() == Type::Float, "chain_rule: only Float nodes carry an adjoint");
  switch (e.kind()) {
    case NodeKind::Unary:
      internal_assert(e.as<Unary>()->op == UnaryOp::Neg, "chain_rule: a Float unary other than neg");
      return Unary::make(UnaryOp::Neg, adjoint, e->pos);
    case NodeKind::Cast: return adjoint;  // float -> float; an int or bool operand has no adjoint
    case NodeKind::Binary: return binary_rule(e.as<Binary>(), e, operand, adjoint, what);
    case NodeKind::Select: return adjoint;  // the arm taken passes it on
    case NodeKind::Call: return call_rule(e.as<Call>(), e, adjoint, what);
    case NodeKind::Let: internal_error("chain_rule: lets must be inlined first");
    default: break;
  }
  internal_error("chain_rule: node without operands");
}

}  // namespace flexjit::ir

#include "codegen/float_math.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>

#include "codegen/cuda_literals.hpp"
#include "ir/internal_error.hpp"

namespace flexjit::codegen {
namespace {

using compiler::MathMode;
using ir::BinaryOp;
using ir::Intrinsic;

// How each mode writes one operation.
template <class Op>
struct Spelling {
  Op op;
  const char* exact;
  const char* fast;
};

// {0} and {1} are the operands.
constexpr Spelling<BinaryOp> kOperators[] = {
    {BinaryOp::Add, "__fadd_rn({0}, {1})", "({0} + {1})"},
    {BinaryOp::Sub, "__fsub_rn({0}, {1})", "({0} - {1})"},
    {BinaryOp::Mul, "__fmul_rn({0}, {1})", "({0} * {1})"},
    {BinaryOp::Div, "__fdiv_rn({0}, {1})", "({0} / {1})"},
};

// The DSL's functions. The same in both modes: log1p (its point is accuracy near 0), sqrt
// (correctly rounded at little cost), sin and cos (the approximations lose accuracy away from
// [-pi, pi]) and those that are exact anyway. sin, cos and tan reduce wide arguments out of line
// (templates/common/dsl_ops.cuh: that code, copied per element, made compiles slow).
constexpr Spelling<Intrinsic> kFunctions[] = {
    {Intrinsic::Exp, "expf", "flexjit::fast_exp"},
    {Intrinsic::Exp2, "exp2f", "flexjit::fast_exp2"},
    {Intrinsic::Log, "logf", "flexjit::fast_log"},
    {Intrinsic::Log2, "log2f", "flexjit::fast_log2"},
    {Intrinsic::Log1p, "log1pf", "log1pf"},
    {Intrinsic::Sqrt, "sqrtf", "sqrtf"},
    {Intrinsic::Rsqrt, "flexjit::ops::rsqrt", "rsqrtf"},
    {Intrinsic::Tanh, "tanhf", "flexjit::fast_tanh"},
    {Intrinsic::Sigmoid, "flexjit::ops::sigmoid", "flexjit::fast_sigmoid"},
    {Intrinsic::Sin, "flexjit::ops::sin", "flexjit::ops::sin"},
    {Intrinsic::Cos, "flexjit::ops::cos", "flexjit::ops::cos"},
    {Intrinsic::Tan, "flexjit::ops::tan", "flexjit::ops::tan"},
    {Intrinsic::Erf, "erff", "erff"},
    // The user asked for the instruction (tanh_approx): it is one in both modes.
    {Intrinsic::TanhApprox, "flexjit::fast_tanh", "flexjit::fast_tanh"},
    {Intrinsic::Floor, "floorf", "floorf"},
    {Intrinsic::Ceil, "ceilf", "ceilf"},
    {Intrinsic::Abs, "flexjit::ops::fabs", "flexjit::ops::fabs"},
    {Intrinsic::FloorToInt, "flexjit::ops::floor_to_int", "flexjit::ops::floor_to_int"},
    {Intrinsic::CeilToInt, "flexjit::ops::ceil_to_int", "flexjit::ops::ceil_to_int"},
};

// op's spelling in `mode`, or null when the table has no row for op.
template <class Op, std::size_t N>
const char* look_up(const Spelling<Op> (&table)[N], Op op, MathMode mode) {
  for (const auto& s : table)
    if (s.op == op) return mode == MathMode::Fast ? s.fast : s.exact;
  return nullptr;
}

// 1 / c when multiplying by it is a faithful stand-in for dividing by c: c finite and non-zero,
// its reciprocal a normal float (so neither overflows nor loses precision to a subnormal).
std::optional<float> usable_reciprocal(float c) {
  if (!std::isfinite(c) || c == 0.0f) return std::nullopt;
  const float r = 1.0f / c;
  if (!std::isnormal(r)) return std::nullopt;
  return r;
}

}  // namespace

bool is_float_arithmetic(BinaryOp op) { return look_up(kOperators, op, MathMode::Exact) != nullptr; }

std::string float_arithmetic(BinaryOp op, const std::string& a, const std::string& b, std::optional<float> b_value,
                             MathMode mode) {
  if (op == BinaryOp::Div && mode == MathMode::Fast && b_value) {
    if (auto r = usable_reciprocal(*b_value))
      return float_arithmetic(BinaryOp::Mul, a, float_literal(*r), std::nullopt, mode);
  }
  const char* pattern = look_up(kOperators, op, mode);
  internal_assert(pattern, "float_arithmetic: not an arithmetic operator");
  return fmt::format(fmt::runtime(pattern), a, b);
}

const char* function_spelling(Intrinsic fn, ir::Type arg, MathMode mode) {
  if (fn == Intrinsic::Abs && arg == ir::Type::Int) return "flexjit::ops::abs";
  const char* name = look_up(kFunctions, fn, mode);
  internal_assert(name, "function_spelling: unknown intrinsic");
  return name;
}

std::string math_mode_comment(MathMode mode) {
  if (mode == MathMode::Exact)
    return "// Math exact: each float operation of the mods rounded on its own, as on the CPU.";
  return "// Math fast: score_mod and sink may fuse into FMAs and use approximate exp, log, tanh "
         "(mask_mod exact).";
}

}  // namespace flexjit::codegen

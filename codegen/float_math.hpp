#pragma once
// How generated code spells float arithmetic and the DSL's functions in each MathMode
// (compiler/target.hpp): the one table, in float_math.cpp.
//   exact: + - * / through the _rn intrinsics, which round each operation on its own (the CUDA
//          compiler never fuses them into an FMA), and the math library's functions: what the CPU
//          back ends compute.
//   fast:  plain operators (the CUDA compiler may contract a * b + c into an FMA), division by a
//          compile-time constant as multiplication by its reciprocal, and the approximations of
//          templates/common/fast_math.cuh for the costly functions.
#include <optional>
#include <string>

#include "compiler/target.hpp"
#include "ir/ir.hpp"

namespace flexjit::codegen {

// Whether op on floats is spelled by float_arithmetic: + - * /.
bool is_float_arithmetic(ir::BinaryOp op);

// `a op b` on floats. b_value: b's value when it is a compile-time constant.
std::string float_arithmetic(ir::BinaryOp op, const std::string& a, const std::string& b, std::optional<float> b_value,
                             compiler::MathMode mode);

// The function computing fn when its first argument has type `arg`.
const char* function_spelling(ir::Intrinsic fn, ir::Type arg, compiler::MathMode mode);

// The line of a kernel's header comment that says how its mods compute.
std::string math_mode_comment(compiler::MathMode mode);

}  // namespace flexjit::codegen

#pragma once
// Python's operator semantics on typed IR values: bool < int < float promotion, true division,
// floor division, mixed comparisons, truthiness. Each function reports a type error as a user
// error at the operator's position (Python's wording where Python has one).
#include <functional>
#include <string>

#include "ir/ir.hpp"
#include "dsl/ast.hpp"

namespace flexjit::compiler {

// Raises a user error at a position; provided by the caller (it knows the source file).
using ErrorSink = std::function<void(dsl::SourcePos, const std::string&)>;

ir::Expr cast_to(ir::Type t, const ir::Expr& e, dsl::SourcePos pos);
// Python's common type of two operands for arithmetic: float if either is float, else int.
ir::Type arithmetic_type(ir::Type a, ir::Type b);

ir::Expr python_binary(dsl::ast::BinOp op, const ir::Expr& a, const ir::Expr& b, dsl::SourcePos pos,
                       const ErrorSink& error);
ir::Expr python_unary(dsl::ast::UnOp op, const ir::Expr& a, dsl::SourcePos pos, const ErrorSink& error);
ir::Expr python_compare(dsl::ast::CmpOp op, const ir::Expr& a, const ir::Expr& b, dsl::SourcePos pos,
                        const ErrorSink& error);
// bool(x): x != 0 for numbers.
ir::Expr truthy(const ir::Expr& e, dsl::SourcePos pos);
// min/max of two values with promotion.
ir::Expr python_min_max(bool is_max, const ir::Expr& a, const ir::Expr& b, dsl::SourcePos pos);
// where(cond, a, b) with promotion of a and b.
ir::Expr python_select(const ir::Expr& cond, const ir::Expr& a, const ir::Expr& b, dsl::SourcePos pos);

}  // namespace flexjit::compiler

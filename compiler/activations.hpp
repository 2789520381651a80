#pragma once
// The activation-style builtins PyTorch code uses (torch.sign, F.relu, F.silu, F.softplus,
// F.gelu), built from comparisons and the IR's intrinsics with PyTorch's definitions.
#include "dsl/source.hpp"
#include "ir/ir.hpp"

namespace flexjit::compiler {

// -1, 0 or 1 in x's type (int for bool); NaN and the zeros are returned as they are.
ir::Expr sign_of(const ir::Expr& x, dsl::SourcePos pos);
// 0 where x is negative, else x (NaN stays NaN, as in PyTorch); int for bool.
ir::Expr relu(const ir::Expr& x, dsl::SourcePos pos);
ir::Expr silu(const ir::Expr& x, dsl::SourcePos pos);  // x * sigmoid(x)
// log1p(exp(beta * x)) / beta, and x itself where beta * x > threshold.
ir::Expr softplus(const ir::Expr& x, const ir::Expr& beta, const ir::Expr& threshold, dsl::SourcePos pos);
// x * (1 + erf(x / sqrt(2))) / 2, or PyTorch's tanh form (approximate="tanh").
ir::Expr gelu(const ir::Expr& x, bool tanh_form, dsl::SourcePos pos);

}  // namespace flexjit::compiler

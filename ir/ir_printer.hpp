#pragma once
// Readable text of the IR, for `flexjit emit ir`, golden tests and error messages. The format
// is stable; change it only together with the golden files.
//
// Expressions are infix with as few parentheses as precedence allows, plus a few for clarity:
// arithmetic or bitwise operands of a comparison (`(q_idx - kv_idx) < window`), `&&` under
// `||`, and mixed bitwise operators are always parenthesised; a right operand of the same
// precedence keeps its parentheses (`a - (b - c)`, `x + (y + z)`), since Float + is not
// associative. Operators: + - * / // % ** (Python's floor division, floor modulo and power),
// & | ^ << >> ~, comparisons, && || ! (C's logical operators). Others print as calls:
// select(c, a, b), min(a, b), max(a, b), exp(x), floor_to_int(x), casts as float(x) / int(x) /
// bool(x), loads as alibi_slopes[h] or bias[h, q_idx]. Constants: 7, -3, true, false, and floats
// in the shortest form that round-trips to the same fp32 (50.0, 0.1, 1e+20, -0.0, inf, -inf, nan).
//
// A Let chain at the top of an expression prints one binding per line:
//   let t0 = doc[q_idx] in
//   t0 == doc[kv_idx] && t0 >= 0
// A Let nested inside an operand prints inline, parenthesised: (let t1 = w[h] in t1 * t1).
#include <iosfwd>
#include <string>

#include "ir/ir.hpp"

namespace flexjit::ir {

std::string to_string(const Expr& e);
// "mask_mod(b, h, q_idx, kv_idx) -> bool:\n  <body, indented two spaces>\n"
std::string to_string(const Mod& m);
// The declarations (captures, scalars, block indices, one per line, in DSL syntax), then a
// blank line and each defined mod (mask_mod, score_mod, sink) separated by blank lines:
//   # program: doc_window
//   doc: Tensor[int32, 1]
//   window: int
//
//   mask_mod(b, h, q_idx, kv_idx) -> bool:
//     (q_idx - kv_idx) < window && doc[q_idx] == doc[kv_idx]
std::string to_string(const Program& p);

std::ostream& operator<<(std::ostream& os, const Expr& e);

}  // namespace flexjit::ir

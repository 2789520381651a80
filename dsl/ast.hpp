#pragma once
// The abstract syntax tree of a flexjit program: data only, every node position-tagged.
// The parser (dsl/parser.cpp: the X3 grammar, then fold.cpp) builds it; compiler/lower.cpp
// consumes it. Operator chains from the grammar are folded here already: Binary is a binary
// tree (left-associative, except ** which is right-associative), comparisons stay chained as
// Python defines them.
//
// Positions (SourcePos: line and byte column of the first character, length to underline;
// a length never runs past the end of the line the node starts on):
//   Name, IntLit, FloatLit, BoolLit, NoneLit, StringLit: the token.
//   Binary, Unary, Compare, BoolChain: the operator (the first one of a Compare/BoolChain,
//     "not in" and "is not" as one), so "unsupported operand" errors underline the operator.
//   Ternary: its 'if'.  Lambda: 'lambda'.
//   Attribute, Call, Subscript: the whole expression from its first character
//     (Attribute::attr_pos is the attribute's name).
//   Tuple: the whole tuple (from its first item, or its '(').
//   UnsupportedExpr: the whole construct ("[1, 2]", "*x", "x := 1", "1:2", the f-string).
//   Parenthesized expressions: the expression inside, without the parentheses.
//   Statements: their keyword (def, return, if / elif, pass, import, from, while, ...;
//     "@" for decorators); Assign, AnnAssign, AugAssign: the target name (= target_pos);
//     ExprStmt and UnsupportedStmt of an assignment: the first expression / the target.
//     TupleAssign: the target list; AttributeAssign: the target's object; Decorator: '@'.
//   FunctionDef::name_pos, Param::pos, Keyword::pos: the name.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dsl/source.hpp"

namespace flexjit::dsl::ast {

struct Expr;
struct Stmt;
using ExprPtr = std::shared_ptr<const Expr>;
using StmtPtr = std::shared_ptr<const Stmt>;
using Block = std::vector<StmtPtr>;

enum class BinOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, BitAnd, BitOr, BitXor, Shl, Shr, MatMul };
enum class UnOp { Neg, Pos, Invert, Not };
enum class CmpOp { Lt, Le, Gt, Ge, Eq, Ne, Is, IsNot, In, NotIn };
enum class BoolOp { And, Or };

const char* spelling(BinOp op);  // "+", "//", ...
const char* spelling(UnOp op);   // "-", "not", ...
const char* spelling(CmpOp op);  // "<", "is not", ...
const char* spelling(BoolOp op); // "and", "or"

struct Param {
  std::string name;
  SourcePos pos;
  ExprPtr annotation;  // may be null
  ExprPtr default_value;  // may be null
};

struct Keyword {  // f(x, name=value)
  std::string name;
  SourcePos pos;
  ExprPtr value;
};

struct IntLit { std::int64_t value; };
struct FloatLit { double value; };
struct BoolLit { bool value; };
struct NoneLit {};
struct StringLit { std::string value; };  // legal only as a docstring; the checker reports others
struct Name { std::string id; };
struct Attribute { ExprPtr value; std::string attr; SourcePos attr_pos; };  // torch.tanh, math.pi
struct Unary { UnOp op; ExprPtr operand; };
struct Binary { BinOp op; ExprPtr lhs, rhs; };
struct BoolChain { BoolOp op; std::vector<ExprPtr> values; };  // a and b and c (>= 2 values)
struct Compare {  // a < b <= c  ==  (a < b) and (b <= c), b evaluated once
  ExprPtr first;
  std::vector<std::pair<CmpOp, ExprPtr>> rest;  // >= 1
};
struct Ternary { ExprPtr then_value, cond, else_value; };  // then_value if cond else else_value
struct Lambda { std::vector<Param> params; ExprPtr body; };
struct Call { ExprPtr callee; std::vector<ExprPtr> args; std::vector<Keyword> keywords; };
struct Subscript { ExprPtr value; std::vector<ExprPtr> indices; };  // t[i], t[i, j]
struct Tuple { std::vector<ExprPtr> items; };  // (a, b), a, b  (a compile-time value)
// Python the language accepts syntactically but flexjit does not support
// (lists, tuples, dicts, sets, slices, f-strings, comprehensions, starred, walrus, await, ...).
// `what` names it for the message: "list literals", "tuples", ...
struct UnsupportedExpr { std::string what; };

struct Expr {
  SourcePos pos;
  std::variant<IntLit, FloatLit, BoolLit, NoneLit, StringLit, Name, Attribute, Unary, Binary,
               BoolChain, Compare, Ternary, Lambda, Call, Subscript, Tuple, UnsupportedExpr>
      node;
};

struct FunctionDef {
  std::string name;
  SourcePos name_pos;
  std::vector<Param> params;
  ExprPtr returns;  // return annotation, may be null
  Block body;
};
struct Assign { std::string target; SourcePos target_pos; ExprPtr value; };  // x = e
struct AnnAssign {  // x: T  or  x: T = e
  std::string target;
  SourcePos target_pos;
  ExprPtr annotation;
  ExprPtr value;  // may be null
};
struct AugAssign { std::string target; SourcePos target_pos; BinOp op; ExprPtr value; };  // x += e
struct Return { ExprPtr value; };  // value may be null (bare return)
struct If { ExprPtr cond; Block body; Block orelse; };  // elif becomes an If alone in orelse
struct Pass {};
struct ExprStmt { ExprPtr value; };  // docstrings and bare expressions
struct Import { std::string module; std::string alias; SourcePos module_pos; };  // import m [as a]
struct ImportedName {  // one name of `from m import a as b`
  std::string name;
  std::string alias;  // "" without `as`
  SourcePos pos;      // the name
};
struct ImportFrom {  // from m import a, b as c  (names empty: `from m import *`)
  std::string module;
  SourcePos module_pos;
  std::vector<ImportedName> names;
};
struct TupleAssign {  // a, b = e
  std::vector<std::pair<std::string, SourcePos>> targets;
  ExprPtr value;
};
struct AttributeAssign { ExprPtr object; std::string attr; SourcePos attr_pos; ExprPtr value; };  // f.__name__ = e
struct Assert { ExprPtr cond; ExprPtr message; };  // message may be null
struct Decorator { ExprPtr value; };  // @value, a statement of its own before the def it decorates
// A statement Python has and flexjit does not: while/for/class/with/try/raise/global/del/...
// `keyword` is its keyword ("while", "for", ...) or a description ("assignment to a subscript").
struct UnsupportedStmt {
  std::string keyword;
  std::string message = "";  // what to say when it is run, if not the keyword's usual message
  std::string defines = "";  // the name it would bind (a def flexjit cannot take), else ""
};

struct Stmt {
  SourcePos pos;
  std::variant<FunctionDef, Assign, AnnAssign, AugAssign, Return, If, Pass, ExprStmt, Import,
               ImportFrom, TupleAssign, AttributeAssign, Assert, Decorator, UnsupportedStmt>
      node;
};

struct Module {
  Block body;
};

}  // namespace flexjit::dsl::ast

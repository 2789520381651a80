#pragma once
// The grammar's attribute types: what Spirit X3 synthesizes for one logical line, before
// fold.cpp turns it into the clean ast:: types. They mirror the grammar rule for rule
// (operator chains come back flat, every precedence level wraps the next), hold byte offsets
// into the source instead of line:col, and use boost::optional because X3 1.74 knows no
// std::optional. Nothing outside dsl/ sees these types.
#include <boost/optional.hpp>
#include <boost/spirit/home/x3/support/ast/variant.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flexjit::dsl::pt {

namespace x3 = boost::spirit::x3;

// Byte offsets [begin, end) of the text a node was parsed from. Token parsers fill them
// directly; rules fill them in on_success (see annotation.hpp).
struct Tagged {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// ---- tokens (filled by the hand-written token parsers in tokens.hpp) ----

struct NameTok : Tagged { std::string id; };
// An operator, delimiter or keyword, spelled as written ("+", "not in", "if", "(").
struct OpTok : Tagged { std::string text; };
struct NumberTok : Tagged {
  enum Kind { Int, Float, Imaginary } kind = Int;
  std::int64_t int_value = 0;
  double float_value = 0;
};
// One or more adjacent string literals, already concatenated and unescaped.
struct StringTok : Tagged {
  std::string value;
  bool fstring = false;  // any part had an f prefix
};
struct ConstTok : Tagged { std::string text; };  // True, False, None, ...
// A construct skipped wholesale because flexjit does not support it (list/dict/set displays,
// comprehension tails); `what` names it for the message.
struct SkippedTok : Tagged { std::string what; };

// ---- expressions ----

struct Chain;
struct UnaryX;
struct PrimaryX;
struct ParenX;
struct TernaryX;
struct LambdaX;
struct StarredX;
struct WalrusX;

struct Expr : x3::variant<NameTok, NumberTok, StringTok, ConstTok, SkippedTok,
                          x3::forward_ast<Chain>, x3::forward_ast<UnaryX>,
                          x3::forward_ast<PrimaryX>, x3::forward_ast<ParenX>,
                          x3::forward_ast<TernaryX>, x3::forward_ast<LambdaX>,
                          x3::forward_ast<StarredX>, x3::forward_ast<WalrusX>> {
  using base_type::base_type;
  using base_type::operator=;
};

struct Link : Tagged {  // one "op operand" step of a chain
  OpTok op;
  Expr operand;
};
// first op1 x1 op2 x2 ...: one precedence level (all ops of the level, as written).
struct Chain : Tagged {
  Expr first;
  std::vector<Link> rest;
};
struct UnaryX : Tagged {  // -x, +x, ~x, not x
  OpTok op;
  Expr operand;
};

struct Arg : Tagged {  // f(x), f(name=x), f(*x)
  boost::optional<NameTok> keyword;
  Expr value;
};
struct CallTrailer : Tagged {
  OpTok open;
  std::vector<Arg> args;
  boost::optional<SkippedTok> comprehension;  // f(x for x in y)
};
struct IndexItem : Tagged {  // t[i] or a slice t[i:j]
  boost::optional<Expr> value;
  bool slice = false;
};
struct IndexTrailer : Tagged {
  OpTok open;
  std::vector<IndexItem> items;
};
struct AttrTrailer : Tagged {
  OpTok dot;
  NameTok name;
};
struct Trailer : x3::variant<CallTrailer, IndexTrailer, AttrTrailer> {
  using base_type::base_type;
  using base_type::operator=;
};
struct PrimaryX : Tagged {  // atom followed by calls, subscripts, attributes
  Expr atom;
  std::vector<Trailer> trailers;
};

struct ParenX : Tagged {  // (x), (a, b), (), (x for ...)
  OpTok open;
  std::vector<Expr> items;
  bool trailing_comma = false;
  boost::optional<SkippedTok> comprehension;
};

struct TernaryTail : Tagged {
  OpTok if_kw;
  Expr cond;
  Expr orelse;
};
struct TernaryX : Tagged {  // body [if cond else orelse]
  Expr body;
  boost::optional<TernaryTail> tail;
};

struct ParamX : Tagged {
  NameTok name;
  boost::optional<Expr> annotation;
  boost::optional<Expr> default_value;
};
struct LambdaParamX : Tagged {
  NameTok name;
  boost::optional<Expr> default_value;
};
struct LambdaX : Tagged {
  OpTok kw;
  std::vector<LambdaParamX> params;
  Expr body;
};
struct StarredX : Tagged {  // *x or **x
  OpTok star;
  Expr value;
};
struct WalrusX : Tagged {  // name := value
  NameTok target;
  OpTok op;
  Expr value;
};

// ---- statements ----

struct ExprList : Tagged {  // a, b, c  (a tuple unless exactly one item and no comma)
  std::vector<Expr> items;
  bool trailing_comma = false;
};
struct AnnTail : Tagged {  // : T [= value]
  OpTok colon;
  Expr annotation;
  boost::optional<ExprList> value;
};
struct AugTail : Tagged {  // += value
  OpTok op;
  ExprList value;
};
struct AssignLink : Tagged {  // = value
  OpTok eq;
  ExprList value;
};
// An expression statement or any kind of assignment; fold.cpp sorts out which.
struct ExprStmtX : Tagged {
  ExprList first;
  boost::optional<AnnTail> ann;
  boost::optional<AugTail> aug;
  std::vector<AssignLink> assigns;
};
struct ReturnX : Tagged {
  OpTok kw;
  boost::optional<ExprList> value;
};
struct ImportNameX : Tagged {  // a.b.c [as d]
  std::vector<NameTok> parts;
  boost::optional<NameTok> alias;
};
struct ImportX : Tagged {
  OpTok kw;
  std::vector<ImportNameX> names;
};
struct FromX : Tagged {  // from [dots]module import a [as b], ...
  OpTok kw;
  OpTok dots;  // leading dots of a relative import ("" when absolute)
  std::vector<NameTok> parts;
  std::vector<ImportNameX> names;  // one part each; empty for `import *`
};
struct AssertX : Tagged {  // assert cond [, message]
  OpTok kw;
  Expr cond;
  boost::optional<Expr> message;
};
struct DecoratorX : Tagged {  // @expr, on the line before a def
  OpTok at;
  Expr value;
};
// pass and the statements flexjit does not support are their keyword token.
struct SimpleX : x3::variant<OpTok, ReturnX, ImportX, FromX, AssertX, DecoratorX, ExprStmtX> {
  using base_type::base_type;
  using base_type::operator=;
};

struct DefX : Tagged {
  OpTok kw;
  NameTok name;
  std::vector<ParamX> params;
  boost::optional<Expr> returns;
};
struct CondX : Tagged {  // if/elif cond:
  OpTok kw;
  Expr cond;
};
// A compound statement's header; `else:` is its keyword token.
struct Header : x3::variant<OpTok, DefX, CondX> {
  using base_type::base_type;
  using base_type::operator=;
};

// One logical line: an optional compound header, then simple statements separated by ';'
// (the header's one-line body, or the whole line).
struct Line : Tagged {
  boost::optional<Header> header;
  std::vector<SimpleX> simple;
};

}  // namespace flexjit::dsl::pt

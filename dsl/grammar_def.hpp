#pragma once
// The grammar of one logical line of the flexjit language (a Python subset), in Spirit X3.
// Only grammar.cpp includes this file, so only that translation unit pays for X3.
//
// Expressions follow Python's precedence, loosest first: lambda, ternary, or, and, not,
// comparisons, |, ^, &, shifts, + -, * / // % @, unary - + ~, **, then calls, subscripts and
// attributes on an atom. Each binary level comes back flat (first + list of op/operand links)
// and fold.cpp folds it; a level that matched only its operand is collapsed away (see
// collapse.hpp). '**' is right-associative because its right operand is a whole unary-level
// expression, which also makes -2**2 parse as -(2**2).
//
// Operands after an operator, ':' after a header and closing brackets are expectation points
// ('>'): a failure there is a syntax error reported with the rule's name ("expected an
// expression"). Where alternatives are tried, the grammar never re-parses more than a name,
// so parsing stays linear.
#include <boost/spirit/home/x3.hpp>

#include "dsl/annotation.hpp"
#include "dsl/ast_adapted.hpp"
#include "dsl/collapse.hpp"
#include "dsl/error_handler.hpp"
#include "dsl/grammar.hpp"
#include "dsl/nesting.hpp"
#include "dsl/tokens.hpp"

namespace flexjit::dsl::grammar {

// ---- tokens ----

auto const name = name_parser{};
auto const number = number_parser{};
auto const string_lit = string_parser{};
auto const constant = const_parser{};
auto const display = display_parser{};
auto const comprehension = comprehension_parser{};
auto const end_of_line = end_parser{};
auto const rest_of_line = rest_parser{};
auto const param_guard = plain_parameter_guard{};
auto const match_kw = match_parser{};
auto const dots = dots_parser{};

auto const colon = lit(":");
auto const comma = lit(",");
auto const semicolon = lit(";");
auto const equals = lit("=");
auto const arrow = lit("->");
auto const close_paren = lit(")");
auto const close_bracket = lit("]");
auto const open_paren_lit = lit("(");
auto const star_lit = lit("*");
auto const dot_lit = lit(".");
auto const kw_else = lit("else");
auto const kw_as = lit("as");
auto const kw_import_lit = lit("import");

auto const open_paren = tok("(");
auto const open_bracket = tok("[");
auto const dot = tok(".");
auto const colon_tok = tok(":");
auto const assign_tok = tok("=");
auto const walrus_op = tok(":=");
auto const star_op = tok("*", "**");
auto const at_tok = tok("@");

auto const kw_lambda = tok("lambda");
auto const kw_if = tok("if");
auto const kw_or = tok("or");
auto const kw_and = tok("and");
auto const kw_not = tok("not");
auto const kw_return = tok("return");
auto const kw_pass = tok("pass");
auto const kw_import = tok("import");
auto const kw_from = tok("from");
auto const kw_assert = tok("assert");
auto const kw_def = tok("def");
auto const kw_cond = tok("if", "elif");
auto const kw_else_tok = tok("else");
// Statements Python has and flexjit does not; the rest of their line is not parsed.
auto const unsupported_kw = tok("while", "for", "class", "with", "try", "except", "finally",
                                "raise", "global", "nonlocal", "del", "yield",
                                "async", "await", "break", "continue");

auto const compare_op = tok("<", ">", "==", ">=", "<=", "!=", "is not", "is", "not in", "in");
auto const bar_op = tok("|");
auto const caret_op = tok("^");
auto const amp_op = tok("&");
auto const shift_op = tok("<<", ">>");
auto const add_op = tok("+", "-");
auto const mul_op = tok("*", "/", "//", "%", "@");
auto const unary_op = tok("-", "+", "~");
auto const pow_op = tok("**");
auto const aug_op = tok("+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=",
                        "<<=", ">>=");

// ---- rules: IDs annotate positions; names are the "expected ..." text ----

#define FLEXJIT_RULE(id, attribute, what)      \
  struct id##_class : annotate_position {};    \
  x3::rule<id##_class, attribute> const id = what;

FLEXJIT_RULE(expr, pt::Expr, "an expression")
FLEXJIT_RULE(lambda_expr, pt::LambdaX, "an expression")
FLEXJIT_RULE(lambda_param, pt::LambdaParamX, "a parameter name")
FLEXJIT_RULE(ternary, pt::Expr, "an expression")
FLEXJIT_RULE(ternary_tail, pt::TernaryTail, "an expression")
FLEXJIT_RULE(or_test, pt::Expr, "an expression")
FLEXJIT_RULE(and_test, pt::Expr, "an expression")
FLEXJIT_RULE(not_test, pt::Expr, "an expression")
FLEXJIT_RULE(not_unary, pt::UnaryX, "an expression")
FLEXJIT_RULE(comparison, pt::Expr, "an expression")
FLEXJIT_RULE(bit_or, pt::Expr, "an expression")
FLEXJIT_RULE(bit_xor, pt::Expr, "an expression")
FLEXJIT_RULE(bit_and, pt::Expr, "an expression")
FLEXJIT_RULE(shift_expr, pt::Expr, "an expression")
FLEXJIT_RULE(arith, pt::Expr, "an expression")
FLEXJIT_RULE(term, pt::Expr, "an expression")
FLEXJIT_RULE(factor, pt::Expr, "an expression")
FLEXJIT_RULE(unary, pt::UnaryX, "an expression")
FLEXJIT_RULE(power, pt::Expr, "an expression")
FLEXJIT_RULE(primary, pt::Expr, "an expression")
FLEXJIT_RULE(atom, pt::Expr, "an expression")
FLEXJIT_RULE(paren, pt::ParenX, "an expression")
FLEXJIT_RULE(trailer, pt::Trailer, "an expression")
FLEXJIT_RULE(call_trailer, pt::CallTrailer, "an argument list")
FLEXJIT_RULE(argument, pt::Arg, "an argument")
FLEXJIT_RULE(keyword_argument, pt::Arg, "an argument")
FLEXJIT_RULE(positional_argument, pt::Arg, "an argument")
FLEXJIT_RULE(index_trailer, pt::IndexTrailer, "an index")
FLEXJIT_RULE(index_list, std::vector<pt::IndexItem>, "an index")
FLEXJIT_RULE(index_item, pt::IndexItem, "an index")
FLEXJIT_RULE(attr_trailer, pt::AttrTrailer, "an attribute name")
FLEXJIT_RULE(attr_name, pt::NameTok, "an attribute name")
FLEXJIT_RULE(starred, pt::StarredX, "an expression")
FLEXJIT_RULE(walrus, pt::WalrusX, "an expression")
FLEXJIT_RULE(named_expr, pt::Expr, "an expression")
FLEXJIT_RULE(star_or_named, pt::Expr, "an expression")
FLEXJIT_RULE(star_or_expr, pt::Expr, "an expression")
FLEXJIT_RULE(expr_list, pt::ExprList, "an expression")

FLEXJIT_RULE(ann_tail, pt::AnnTail, "an annotation")
FLEXJIT_RULE(aug_tail, pt::AugTail, "an expression")
FLEXJIT_RULE(assign_link, pt::AssignLink, "an expression")
FLEXJIT_RULE(expr_stmt, pt::ExprStmtX, "a statement")
FLEXJIT_RULE(return_stmt, pt::ReturnX, "a statement")
FLEXJIT_RULE(import_name, pt::ImportNameX, "a module name")
FLEXJIT_RULE(import_names, std::vector<pt::ImportNameX>, "a module name")
FLEXJIT_RULE(import_stmt, pt::ImportX, "a statement")
FLEXJIT_RULE(from_stmt, pt::FromX, "a statement")
FLEXJIT_RULE(from_name, pt::ImportNameX, "a name")
FLEXJIT_RULE(import_targets, std::vector<pt::ImportNameX>, "a name")
FLEXJIT_RULE(assert_stmt, pt::AssertX, "a statement")
FLEXJIT_RULE(decorator, pt::DecoratorX, "a statement")
FLEXJIT_RULE(keyword_stmt, pt::OpTok, "a statement")
FLEXJIT_RULE(simple_stmt, pt::SimpleX, "a statement")
FLEXJIT_RULE(param, pt::ParamX, "a parameter name")
FLEXJIT_RULE(func_name, pt::NameTok, "a function name")
FLEXJIT_RULE(def_header, pt::DefX, "a statement")
FLEXJIT_RULE(cond_header, pt::CondX, "a statement")
FLEXJIT_RULE(else_header, pt::OpTok, "a statement")
FLEXJIT_RULE(header, pt::Header, "a statement")

#undef FLEXJIT_RULE

// The top rule also reports syntax errors (see error_handler.hpp).
struct line_class : annotate_position, error_handler_base {};
line_type const line = "a statement";

// ---- expressions ----

auto const expr_def = nest[lambda_expr | ternary];
auto const lambda_expr_def = kw_lambda > -(lambda_param % comma >> -comma) > colon > expr;
auto const lambda_param_def = param_guard >> name >> -(equals > expr);
auto const ternary_def = collapse<pt::TernaryX>[or_test >> -ternary_tail];
auto const ternary_tail_def = kw_if > or_test > kw_else > expr;
auto const or_test_def = collapse<pt::Chain>[and_test >> *(kw_or > and_test)];
auto const and_test_def = collapse<pt::Chain>[not_test >> *(kw_and > not_test)];
auto const not_test_def = nest[not_unary | comparison];
auto const not_unary_def = kw_not > not_test;
auto const comparison_def = collapse<pt::Chain>[bit_or >> *(compare_op > bit_or)];
auto const bit_or_def = collapse<pt::Chain>[bit_xor >> *(bar_op > bit_xor)];
auto const bit_xor_def = collapse<pt::Chain>[bit_and >> *(caret_op > bit_and)];
auto const bit_and_def = collapse<pt::Chain>[shift_expr >> *(amp_op > shift_expr)];
auto const shift_expr_def = collapse<pt::Chain>[arith >> *(shift_op > arith)];
auto const arith_def = collapse<pt::Chain>[term >> *(add_op > term)];
auto const term_def = collapse<pt::Chain>[factor >> *(mul_op > factor)];
auto const factor_def = nest[unary | power];
auto const unary_def = unary_op > factor;
// At most one link: the right operand (a factor) swallows any further '**'.
auto const power_def = collapse<pt::Chain>[primary >> *(pow_op > factor)];
auto const primary_def = collapse<pt::PrimaryX>[atom >> *trailer];
auto const atom_def = number | string_lit | name | constant | paren | display;
auto const paren_def =
    (open_paren >> -(star_or_named % comma) >> x3::matches[comma] >> -comprehension) > close_paren;

auto const trailer_def = call_trailer | index_trailer | attr_trailer;
auto const call_trailer_def =
    (open_paren >> -(argument % comma >> -comma) >> -comprehension) > close_paren;
// Both alternatives fill the same Arg; the explicit empty keyword overwrites the one a
// keyword_argument that failed at its '=' may have left behind.
auto const argument_def = keyword_argument | positional_argument;
auto const keyword_argument_def = (name >> equals) > star_or_named;
auto const positional_argument_def = x3::attr(boost::optional<pt::NameTok>()) >> star_or_named;
auto const index_trailer_def = open_bracket > index_list > close_bracket;
auto const index_list_def = index_item % comma >> -comma;
auto const slice_tail = x3::omit[colon >> -expr >> -(colon >> -expr)];
auto const index_item_def = !(comma | close_bracket) >> -star_or_named >> x3::matches[slice_tail];
auto const attr_trailer_def = dot > attr_name;
auto const attr_name_def = name;

auto const starred_def = star_op > bit_or;
auto const walrus_def = (name >> walrus_op) > expr;
auto const named_expr_def = walrus | expr;
auto const star_or_named_def = starred | named_expr;
auto const star_or_expr_def = starred | expr;
auto const expr_list_def = (star_or_expr % comma) >> x3::matches[comma];

// ---- statements ----

auto const ann_tail_def = colon_tok > expr > -(equals > expr_list);
auto const aug_tail_def = aug_op > expr_list;
auto const assign_link_def = assign_tok > expr_list;
auto const expr_stmt_def = expr_list >> -ann_tail >> -aug_tail >> *assign_link;
auto const return_stmt_def = kw_return >> -expr_list;
auto const import_name_def = (name % dot_lit) >> -(kw_as > name);
auto const import_names_def = import_name % comma;
auto const import_stmt_def = kw_import > import_names;
auto const from_name_def = x3::repeat(1)[name] >> -(kw_as > name);
// `import *` leaves the list empty.
auto const import_targets_def = (star_lit >> x3::attr(std::vector<pt::ImportNameX>())) |
                                (open_paren_lit > (from_name % comma) >> -comma > close_paren) |
                                (from_name % comma);
auto const from_stmt_def = kw_from > dots >> -(name % dot_lit) > kw_import_lit > import_targets;
auto const assert_stmt_def = kw_assert > expr >> -(comma > expr);
auto const decorator_def = at_tok > named_expr;
auto const keyword_stmt_def = kw_pass | ((unsupported_kw | match_kw) >> rest_of_line);
auto const simple_stmt_def =
    keyword_stmt | decorator | assert_stmt | return_stmt | import_stmt | from_stmt | expr_stmt;

auto const param_def = param_guard >> name >> -(colon > expr) >> -(equals > expr);
auto const func_name_def = name;
auto const def_header_def = kw_def > func_name > open_paren_lit > -(param % comma >> -comma) >
                            close_paren > -(arrow > expr) > colon;
auto const cond_header_def = kw_cond > named_expr > colon;
auto const else_header_def = kw_else_tok > colon;
auto const header_def = def_header | cond_header | else_header;

// A compound header, its one-line body or a line of simple statements, and nothing else.
auto const line_def = (-header >> -(simple_stmt % semicolon >> -semicolon)) > end_of_line;

BOOST_SPIRIT_DEFINE(expr, lambda_expr, lambda_param, ternary, ternary_tail, or_test, and_test,
                    not_test, not_unary, comparison, bit_or, bit_xor, bit_and, shift_expr)
BOOST_SPIRIT_DEFINE(arith, term, factor, unary, power, primary, atom, paren, trailer,
                    call_trailer, argument, keyword_argument, positional_argument)
BOOST_SPIRIT_DEFINE(index_trailer, index_list, index_item, attr_trailer, attr_name, starred,
                    walrus, named_expr, star_or_named, star_or_expr, expr_list)
BOOST_SPIRIT_DEFINE(ann_tail, aug_tail, assign_link, expr_stmt, return_stmt, import_name,
                    import_names, import_stmt, from_stmt, from_name, import_targets, assert_stmt,
                    decorator, keyword_stmt, simple_stmt)
BOOST_SPIRIT_DEFINE(param, func_name, def_header, cond_header, else_header, header, line)

line_type const& line_rule() { return line; }

}  // namespace flexjit::dsl::grammar

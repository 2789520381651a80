#pragma once
// nest[p]: counts how deeply expressions are nested and stops with a clear error before the
// recursive descent can exhaust the stack (100000 '(' in a row must not crash the process).
#include <boost/spirit/home/x3/core/parser.hpp>
#include <boost/spirit/home/x3/core/skip_over.hpp>
#include <boost/spirit/home/x3/support/context.hpp>

#include "dsl/parse_state.hpp"

namespace flexjit::dsl::grammar {

namespace x3 = boost::spirit::x3;

// Each '(' costs three levels (expression, 'not' operand, unary operand), so this allows
// 100 nested parentheses, or 300 unary operators in a row. One '(' level takes about 7 KB of
// stack in an optimized build (several times that under AddressSanitizer), so the deepest
// accepted expression stays well inside a default 8 MB thread stack.
inline constexpr int kMaxNesting = 300;

template <typename Subject>
struct nest_directive : x3::unary_parser<Subject, nest_directive<Subject>> {
  using base_type = x3::unary_parser<Subject, nest_directive<Subject>>;
  static bool const is_pass_through_unary = true;

  constexpr nest_directive(Subject const& subject) : base_type(subject) {}

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr& attr) const {
    ParseState& state = x3::get<state_tag>(ctx);
    if (state.depth >= kMaxNesting) {
      It at = first;
      x3::skip_over(at, last, ctx);
      throw SyntaxError{at, 1, "expression nested too deeply"};
    }
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{++state.depth};
    return this->subject.parse(first, last, ctx, rctx, attr);
  }
};

struct nest_gen {
  template <typename Subject>
  constexpr nest_directive<typename x3::extension::as_parser<Subject>::value_type> operator[](
      Subject const& subject) const {
    return {x3::as_parser(subject)};
  }
};

inline constexpr nest_gen nest{};

}  // namespace flexjit::dsl::grammar

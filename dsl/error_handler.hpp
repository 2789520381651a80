#pragma once
// The error handler of the top rule (one logical line): an expectation failure anywhere
// below stops the parse, and we keep where it happened and what was expected. parser.cpp
// turns that into the message (with the source line and caret, via format_diagnostic).
// Rule names are written as the text that follows "expected", e.g. "an expression".
#include <boost/spirit/home/x3/auxiliary/guard.hpp>
#include <boost/spirit/home/x3/support/context.hpp>

#include "dsl/parse_state.hpp"

namespace flexjit::dsl::grammar {

namespace x3 = boost::spirit::x3;

struct error_handler_base {
  template <typename It, typename Exception, typename Ctx>
  x3::error_handler_result on_error(It&, It const&, Exception const& x, Ctx const& ctx) const {
    ParseState& state = x3::get<state_tag>(ctx);
    state.error_where = x.where();
    state.error_which = x.which();
    return x3::error_handler_result::fail;
  }
};

}  // namespace flexjit::dsl::grammar

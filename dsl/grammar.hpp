#pragma once
// The grammar's X3 interface: the top rule (one logical line) and the iterator and context
// types it is instantiated for in grammar.cpp. Only grammar_def.hpp and grammar.cpp include
// this; the rest of dsl/ calls grammar::parse_line (line_parser.hpp).
#include <boost/spirit/home/x3/nonterminal/rule.hpp>
#include <boost/spirit/home/x3/support/context.hpp>

#include "dsl/parse_state.hpp"
#include "dsl/parse_tree.hpp"
#include "dsl/skipper.hpp"

namespace flexjit::dsl::grammar {

namespace x3 = boost::spirit::x3;

using iterator_type = const char*;
using skipper_context_type = x3::context<x3::skipper_tag, skipper_parser const, x3::unused_type>;
// The parse state rides in the context under state_tag (see parse_state.hpp).
using context_type = x3::context<state_tag, ParseState, skipper_context_type>;

struct line_class;
using line_type = x3::rule<line_class, pt::Line>;
BOOST_SPIRIT_DECLARE(line_type)

line_type const& line_rule();

}  // namespace flexjit::dsl::grammar

#pragma once
// The one entry point into the X3 grammar, free of Spirit headers.
#include "dsl/parse_state.hpp"
#include "dsl/parse_tree.hpp"

namespace flexjit::dsl::grammar {

// Parses [first, last), one logical line of the buffer state.buffer points into.
// Returns false on an expectation failure (state.error_where / error_which say which);
// throws SyntaxError for a malformed token or too deep nesting.
bool parse_line(const char* first, const char* last, ParseState& state, pt::Line& out);

}  // namespace flexjit::dsl::grammar

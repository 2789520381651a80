#pragma once
// State shared by the grammar's parsers while one logical line is parsed, reached through
// the X3 context under state_tag; and the exception token parsers throw for lexical errors.
#include <cstddef>
#include <string>

namespace flexjit::dsl::grammar {

struct state_tag;  // context key for ParseState

struct ParseState {
  const char* buffer = nullptr;     // start of the file: parse-tree offsets are relative to it
  const char* line_last = nullptr;  // last significant character of the line being parsed
  int depth = 0;                    // current expression nesting (see nesting.hpp)
  // Filled by the error handler when an expectation fails.
  const char* error_where = nullptr;
  std::string error_which;
};

// A malformed token (bad number, unterminated string, nesting too deep). Not an X3
// expectation failure: it aborts the whole parse with its own message.
struct SyntaxError {
  const char* where;
  std::size_t length;
  std::string message;
  // Valid Python that flexjit does not take (`*args` in a def): a def with it becomes an
  // unsupported statement, refused only where a mod reaches it.
  bool python_accepts = false;
};

}  // namespace flexjit::dsl::grammar

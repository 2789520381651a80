#pragma once
// Token scanners: plain functions over [p, last) that recognize one Python token each.
// The grammar's primitive parsers (tokens.hpp) wrap them, so X3 sees whole tokens (maximal
// munch: '<<=' is never '<' followed by '<=') and this logic is compiled outside the grammar's
// translation unit. Malformed tokens throw grammar::SyntaxError.
#include <cstddef>
#include <string>
#include <string_view>

#include "dsl/parse_tree.hpp"

namespace flexjit::dsl::scan {

bool is_keyword(std::string_view word);  // Python's reserved words (soft keywords excluded)

std::size_t word_length(const char* p, const char* last);      // identifier characters at p
std::size_t operator_length(const char* p, const char* last);  // longest operator at p; 0 at end
// Length of whatever token starts at p (for the caret underline of an error); 0 at end.
std::size_t token_length(const char* p, const char* last);
// Skips what the grammar's skipper skips (blanks, newlines, comments, continuations).
const char* skip_blanks(const char* p, const char* last);

// A number literal at p (digits or '.' + digit): fills `out` (offsets relative to `buffer`)
// and returns its end, or nullptr when no number starts at p.
const char* scan_number(const char* p, const char* last, const char* buffer, pt::NumberTok& out);

// Length of the string prefix (r, b, f, rb, ...) when a string literal starts at p, else -1.
int string_start(const char* p, const char* last);
// One string literal at p (prefix included): appends its value, returns its end.
const char* scan_string(const char* p, const char* last, std::string& value, bool& fstring);

// A bracketed display at p ('[' or '{') skipped to its closer: returns the end and names it
// ("list literals", "dict or set comprehensions", ...).
const char* skip_display(const char* p, const char* last, std::string& what);
// A comprehension tail starting at the 'for' at p: returns the closing bracket ending it.
const char* skip_comprehension(const char* p, const char* last);

}  // namespace flexjit::dsl::scan

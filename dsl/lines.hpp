#pragma once
// Python's line structure, done by hand before the grammar runs: physical lines are joined
// into logical lines (inside brackets, after a backslash, inside triple-quoted strings),
// blank and comment-only lines are dropped, and indentation becomes a level per line the way
// Python's tokenizer turns it into INDENT/DEDENT tokens. The grammar then parses each logical
// line over the original buffer, so every position it reports is a real line:col.
//
// Lexical errors found here (unterminated strings, invalid characters, mismatched brackets,
// bad dedents, tabs mixed with spaces) end the scan; the parser reports them once it has
// parsed every line before them, so the first error in the file is the one reported.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "dsl/diagnostics.hpp"
#include "dsl/source.hpp"

namespace flexjit::dsl {

struct LogicalLine {
  std::size_t begin = 0;  // offset of its first character (after the indentation)
  std::size_t end = 0;    // offset of the newline (or end of file) that ends it
  std::size_t last = 0;   // offset of its last character outside comments and blanks
  int level = 0;          // indentation level; never more than the previous line's + 1
};

struct LineSplit {
  std::vector<LogicalLine> lines;
  std::optional<Diagnostic> error;  // a lexical error after (or inside) the line after `lines`
};

// Python allows 100 levels of indentation; so do we (it also bounds the parser's recursion).
inline constexpr int kMaxIndentLevels = 100;

LineSplit split_lines(const SourceFile& file);

// Helpers shared with the grammar: Python's identifier characters (ASCII only in flexjit) and
// the string prefixes that may precede a quote (r, b, u, f and their two-letter combinations).
inline bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_string_prefix(std::string_view word);

}  // namespace flexjit::dsl

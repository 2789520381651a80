// The logical-line splitter: a single forward scan over the bytes of the file.
#include "dsl/lines.hpp"

#include "dsl/utf8.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string>

namespace flexjit::dsl {

bool is_string_prefix(std::string_view w) {
  if (w.empty() || w.size() > 2) return false;
  std::string lower;
  for (char c : w) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "r" || lower == "u" || lower == "b" || lower == "f" || lower == "br" ||
         lower == "rb" || lower == "fr" || lower == "rf";
}

namespace {

struct Indent {
  int col8;  // column with tabs to multiples of 8
  int col1;  // column with tabs counted as 1: if the two orders disagree, tabs were mixed
};

struct Opener {
  char ch;
  std::size_t offset;
};

// Decodes one UTF-8 sequence at s[i]; returns its length (0 when malformed) and the code point.
int decode_utf8(const std::string& s, std::size_t i, char32_t& cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  int len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (c >= 0xF5) len = 0;
  if (len == 0 || i + len > s.size()) return 0;
  cp = c & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  return len;
}

class Splitter {
 public:
  explicit Splitter(const SourceFile& file) : file_(file), s_(file.text()), n_(s_.size()) {}

  LineSplit run() {
    if (auto nul = s_.find('\0'); nul != std::string::npos) {
      fail(nul, 1, "source code cannot contain null bytes");
      return std::move(out_);
    }
    // Python decodes the whole file before it tokenizes: a bad byte in a comment is an error too.
    if (auto bad = first_invalid_utf8(s_); bad != std::string::npos) {
      fail(bad, 1, fmt::format("invalid byte 0x{:02x}: source files must be UTF-8", static_cast<unsigned char>(s_[bad])));
      return std::move(out_);
    }
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) i_ = 3;  // a UTF-8 byte order mark, as Python allows
    while (i_ < n_) {
      Indent ind{0, 0};
      while (i_ < n_ && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\f' || s_[i_] == '\r')) {
        if (s_[i_] == ' ') ++ind.col8, ++ind.col1;
        if (s_[i_] == '\t') ind.col8 = (ind.col8 / 8 + 1) * 8, ++ind.col1;
        if (s_[i_] == '\f') ind = {0, 0};  // as in Python: a form feed resets the column
        ++i_;
      }
      if (i_ >= n_) break;
      if (s_[i_] == '\n') { ++i_; continue; }  // blank line: no effect on indentation
      if (s_[i_] == '#') { skip_comment(); continue; }
      LogicalLine line;
      line.begin = i_;
      if (!indent(ind, line.level)) break;
      if (!scan_content(line)) break;
      out_.lines.push_back(line);
    }
    return std::move(out_);
  }

 private:
  void fail(std::size_t offset, int length, std::string message) {
    out_.error = Diagnostic{Severity::Error, file_.pos_at(offset, length), std::move(message)};
  }

  void skip_comment() {
    while (i_ < n_ && s_[i_] != '\n') ++i_;
  }

  // Compares this line's indentation with the stack of open blocks, as Python's tokenizer does.
  bool indent(Indent ind, int& level) {
    const Indent top = stack_.back();
    if (ind.col8 == top.col8) {
      if (ind.col1 != top.col1) return tab_error();
    } else if (ind.col8 > top.col8) {
      if (ind.col1 <= top.col1) return tab_error();
      if (static_cast<int>(stack_.size()) > kMaxIndentLevels) {
        fail(i_, 1, "too many levels of indentation");
        return false;
      }
      stack_.push_back(ind);
    } else {
      while (stack_.size() > 1 && ind.col8 < stack_.back().col8) stack_.pop_back();
      if (ind.col8 != stack_.back().col8) {
        fail(i_, 1, "unindent does not match any outer indentation level");
        return false;
      }
      if (ind.col1 != stack_.back().col1) return tab_error();
    }
    level = static_cast<int>(stack_.size()) - 1;
    return true;
  }

  bool tab_error() {
    fail(i_, 1, "inconsistent use of tabs and spaces in indentation");
    return false;
  }

  // Scans to the newline that ends the logical line starting at i_.
  bool scan_content(LogicalLine& line) {
    line.last = i_;
    for (;;) {
      if (i_ >= n_) {
        if (!brackets_.empty()) {
          fail(brackets_.back().offset, 1,
               fmt::format("'{}' was never closed", brackets_.back().ch));
          return false;
        }
        line.end = n_;
        return true;
      }
      const char c = s_[i_];
      const unsigned char uc = static_cast<unsigned char>(c);
      if (c == '\n') {
        if (brackets_.empty()) {
          line.end = i_++;
          return true;
        }
        ++i_;  // implicit line joining inside brackets
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\f' || c == '\r') { ++i_; continue; }
      if (c == '#') { skip_comment(); continue; }
      if (c == '\\') {
        if (i_ + 1 < n_ && s_[i_ + 1] == '\n') { i_ += 2; continue; }
        if (i_ + 2 < n_ && s_[i_ + 1] == '\r' && s_[i_ + 2] == '\n') { i_ += 3; continue; }
        if (i_ + 1 >= n_) {
          fail(i_, 1, "unexpected end of file after line continuation character");
        } else {
          fail(i_, 1, "unexpected character after line continuation character");
        }
        return false;
      }
      line.last = i_;
      if (c == '\'' || c == '"') {
        if (!scan_string(i_, i_, line)) return false;
        continue;
      }
      if (is_ident_start(c)) {
        std::size_t start = i_;
        while (i_ < n_ && is_ident_char(s_[i_])) ++i_;
        line.last = i_ - 1;
        if (i_ < n_ && (s_[i_] == '\'' || s_[i_] == '"') &&
            is_string_prefix(std::string_view(s_).substr(start, i_ - start))) {
          if (!scan_string(start, i_, line)) return false;
        }
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        brackets_.push_back({c, i_++});
        continue;
      }
      if (c == ')' || c == ']' || c == '}') {
        if (!close_bracket(c)) return false;
        ++i_;
        continue;
      }
      if (uc >= 0x80) {
        char32_t cp = 0;
        int len = decode_utf8(s_, i_, cp);
        if (len == 0) {
          fail(i_, 1, fmt::format("invalid byte 0x{:02x}: source files must be UTF-8", uc));
        } else {
          fail(i_, 1, fmt::format("invalid character '{}' (U+{:04X})", s_.substr(i_, len),
                                    static_cast<unsigned>(cp)));
        }
        return false;
      }
      if (uc < 0x20 || uc == 0x7F) {
        fail(i_, 1, fmt::format("invalid non-printable character U+{:04X}", unsigned(uc)));
        return false;
      }
      if (c == '$' || c == '?' || c == '`') {
        fail(i_, 1, fmt::format("invalid character '{}'", c));
        return false;
      }
      ++i_;  // digits, operators and delimiters: the grammar sorts them out
    }
  }

  bool close_bracket(char c) {
    const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
    if (brackets_.empty()) {
      fail(i_, 1, fmt::format("unmatched '{}'", c));
      return false;
    }
    const Opener open = brackets_.back();
    if (open.ch != want) {
      SourcePos at = file_.pos_at(open.offset);
      SourcePos here = file_.pos_at(i_);
      std::string msg = fmt::format("closing parenthesis '{}' does not match opening parenthesis '{}'",
                                    c, open.ch);
      if (at.line != here.line) msg += fmt::format(" on line {}", at.line);
      fail(i_, 1, msg);
      return false;
    }
    brackets_.pop_back();
    return true;
  }

  // A string literal whose prefix starts at `start` and whose opening quote is at `quote`.
  bool scan_string(std::size_t start, std::size_t quote, LogicalLine& line) {
    const char q = s_[quote];
    const bool triple = quote + 2 < n_ && s_[quote + 1] == q && s_[quote + 2] == q;
    i_ = quote + (triple ? 3 : 1);
    for (;;) {
      if (i_ >= n_ || (!triple && s_[i_] == '\n')) {
        fail(start, 1, triple ? "unterminated triple-quoted string literal"
                              : "unterminated string literal");
        return false;
      }
      if (s_[i_] == '\\') {  // skips the escaped character, also in raw strings (r"\"" is valid)
        i_ += (i_ + 2 < n_ && s_[i_ + 1] == '\r' && s_[i_ + 2] == '\n') ? 3 : 2;
        continue;
      }
      if (s_[i_] == q && (!triple || (i_ + 2 < n_ && s_[i_ + 1] == q && s_[i_ + 2] == q))) {
        i_ += triple ? 3 : 1;
        line.last = i_ - 1;
        return true;
      }
      ++i_;
    }
  }

  const SourceFile& file_;
  const std::string& s_;
  const std::size_t n_;
  std::size_t i_ = 0;
  std::vector<Indent> stack_{{0, 0}};
  std::vector<Opener> brackets_;
  LineSplit out_;
};

}  // namespace

LineSplit split_lines(const SourceFile& file) { return Splitter(file).run(); }

}  // namespace flexjit::dsl

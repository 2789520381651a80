// Token scanners (see scan.hpp). Python's tokenizer rules, restricted to ASCII identifiers.
#include "dsl/scan.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "dsl/lines.hpp"
#include "dsl/parse_state.hpp"

namespace flexjit::dsl::scan {
namespace {

[[noreturn]] void fail(const char* where, const char* last, std::string message) {
  // Underline the whole malformed token.
  const char* end = where;
  while (end != last && (is_ident_char(*end) || *end == '.')) ++end;
  throw grammar::SyntaxError{where, static_cast<std::size_t>(std::max<std::ptrdiff_t>(end - where, 1)),
                             std::move(message)};
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

// Digits of `base` with single underscores between them, as in 1_000 or 0x_ff.
// Returns false on a misplaced underscore. `digits` collects the digits without underscores.
bool read_digits(const char*& p, const char* last, int base, std::string& digits) {
  while (p != last) {
    if (*p == '_') {
      if (p + 1 == last || digit_value(p[1]) >= base) return false;
      ++p;
    }
    if (p == last || digit_value(*p) >= base) break;
    digits += *p++;
  }
  return true;
}

// Accumulates digits in `base` into an int64; false on overflow.
bool to_int64(const std::string& digits, int base, std::int64_t& out) {
  std::uint64_t v = 0;
  const std::uint64_t max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (char c : digits) {
    std::uint64_t d = static_cast<std::uint64_t>(digit_value(c));
    if (v > (max - d) / static_cast<std::uint64_t>(base)) return false;
    v = v * static_cast<std::uint64_t>(base) + d;
  }
  out = static_cast<std::int64_t>(v);
  return true;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes the escape sequence after a backslash at p[-1]; returns the position after it.
const char* unescape(const char* p, const char* end, bool bytes, std::string& out) {
  const char c = *p;
  switch (c) {
    case '\n': return p + 1;  // backslash-newline: line continuation inside the string
    case '\r': return (p + 1 != end && p[1] == '\n') ? p + 2 : p + 1;
    case '\\': out += '\\'; return p + 1;
    case '\'': out += '\''; return p + 1;
    case '"': out += '"'; return p + 1;
    case 'a': out += '\a'; return p + 1;
    case 'b': out += '\b'; return p + 1;
    case 'f': out += '\f'; return p + 1;
    case 'n': out += '\n'; return p + 1;
    case 'r': out += '\r'; return p + 1;
    case 't': out += '\t'; return p + 1;
    case 'v': out += '\v'; return p + 1;
    default: break;
  }
  if (c >= '0' && c <= '7') {
    unsigned v = 0;
    int n = 0;
    while (n < 3 && p != end && *p >= '0' && *p <= '7') v = v * 8 + unsigned(*p++ - '0'), ++n;
    if (bytes || v < 0x80) out += static_cast<char>(v & 0xFF);
    else append_utf8(out, v);
    return p;
  }
  int width = c == 'x' ? 2 : (!bytes && c == 'u') ? 4 : (!bytes && c == 'U') ? 8 : 0;
  if (width > 0 && end - (p + 1) >= width &&
      std::all_of(p + 1, p + 1 + width, [](char h) { return digit_value(h) < 16; })) {
    std::uint32_t v = 0;
    for (int k = 1; k <= width; ++k) v = v * 16 + static_cast<std::uint32_t>(digit_value(p[k]));
    if (v <= 0x10FFFF) {
      if (c == 'x' && (bytes || v < 0x80)) out += static_cast<char>(v);
      else append_utf8(out, v);
      return p + 1 + width;
    }
  }
  out += '\\';  // unknown or malformed escape: kept as written (Python only warns)
  return p;
}

bool is_quote(char c) { return c == '\'' || c == '"'; }

}  // namespace

bool is_keyword(std::string_view w) {
  static constexpr std::string_view kKeywords[] = {  // sorted, for the binary search
      "False", "None",   "True",    "and",      "as",   "assert", "async",  "await",
      "break", "class",  "continue", "def",     "del",  "elif",   "else",   "except",
      "finally", "for",  "from",    "global",   "if",   "import", "in",     "is",
      "lambda", "nonlocal", "not",  "or",       "pass", "raise",  "return", "try",
      "while", "with",   "yield"};
  return std::binary_search(std::begin(kKeywords), std::end(kKeywords), w);
}

std::size_t word_length(const char* p, const char* last) {
  if (p == last || !is_ident_start(*p)) return 0;
  const char* q = p;
  while (q != last && is_ident_char(*q)) ++q;
  return static_cast<std::size_t>(q - p);
}

std::size_t operator_length(const char* p, const char* last) {
  if (p == last) return 0;
  const char c = p[0];
  const char d = last - p > 1 ? p[1] : '\0';
  const char e = last - p > 2 ? p[2] : '\0';
  switch (c) {
    case '*': case '/': case '<': case '>':  // ** // << >>, their '=' forms, <= >=
      if (d == c) return e == '=' ? 3 : 2;
      return d == '=' ? 2 : 1;
    case '.':  // ... (the ellipsis)
      return d == '.' && e == '.' ? 3 : 1;
    case '-':  // -= ->
      return d == '=' || d == '>' ? 2 : 1;
    case '=': case '!': case ':': case '+': case '%': case '&': case '|': case '^': case '@':
      return d == '=' ? 2 : 1;  // == != := += %= &= |= ^= @=
    default:
      return 1;
  }
}

std::size_t token_length(const char* p, const char* last) {
  if (p == last) return 0;
  if (is_ident_char(*p) || (*p == '.' && p + 1 != last && is_digit(p[1]))) {
    const char* q = p;
    while (q != last && (is_ident_char(*q) || *q == '.')) ++q;
    return static_cast<std::size_t>(q - p);
  }
  return operator_length(p, last);
}

const char* skip_blanks(const char* p, const char* last) {
  while (p != last) {
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f') {
      ++p;
    } else if (*p == '#') {
      while (p != last && *p != '\n') ++p;
    } else if (*p == '\\' && p + 1 != last && (p[1] == '\n' || p[1] == '\r')) {
      p += 2;
    } else {
      break;
    }
  }
  return p;
}

const char* scan_number(const char* p, const char* last, const char* buffer, pt::NumberTok& out) {
  if (p == last || !(is_digit(*p) || (*p == '.' && p + 1 != last && is_digit(p[1])))) return nullptr;
  const char* const start = p;
  out = pt::NumberTok{};
  out.begin = static_cast<std::size_t>(start - buffer);
  std::string digits;

  if (*p == '0' && p + 1 != last && std::string_view("xXoObB").find(p[1]) != std::string_view::npos) {
    const char k = static_cast<char>(p[1] | 0x20);
    const int base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
    const char* name = k == 'x' ? "hexadecimal" : k == 'o' ? "octal" : "binary";
    p += 2;
    if (p != last && *p == '_') ++p;  // 0x_ff is valid
    if (!read_digits(p, last, base, digits) || digits.empty() || (p != last && is_ident_char(*p)))
      fail(start, last, std::string("invalid ") + name + " literal");
    if (!to_int64(digits, base, out.int_value)) fail(start, last, "integer literal too large");
    out.end = static_cast<std::size_t>(p - buffer);
    return p;
  }

  if (!read_digits(p, last, 10, digits)) fail(start, last, "invalid decimal literal");
  const std::size_t int_digits = digits.size();
  bool is_float = false;
  if (p != last && *p == '.') {
    is_float = true;
    digits += *p++;
    if (p != last && is_digit(*p) && !read_digits(p, last, 10, digits))
      fail(start, last, "invalid decimal literal");
  }
  if (p != last && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    if (q != last && (*q == '+' || *q == '-')) ++q;
    if (q == last || !is_digit(*q)) fail(start, last, "invalid decimal literal");
    digits += 'e';
    if (q[-1] == '-' || q[-1] == '+') digits += q[-1];
    p = q;
    if (!read_digits(p, last, 10, digits)) fail(start, last, "invalid decimal literal");
    is_float = true;
  }
  if (p != last && (*p == 'j' || *p == 'J')) {
    ++p;
    out.kind = pt::NumberTok::Imaginary;
  }
  if (p != last && is_ident_char(*p)) fail(start, last, "invalid decimal literal");
  out.end = static_cast<std::size_t>(p - buffer);

  if (out.kind == pt::NumberTok::Imaginary) return p;
  if (!is_float) {
    if (int_digits > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos)
      fail(start, last,
           "leading zeros in decimal integer literals are not permitted; use an 0o prefix for "
           "octal integers");
    if (!to_int64(digits, 10, out.int_value)) fail(start, last, "integer literal too large");
    return p;
  }
  out.kind = pt::NumberTok::Float;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out.float_value);
  if (r.ec == std::errc::result_out_of_range) {
    // Python rounds to inf or 0.0; from_chars leaves the value to us.
    const auto e = digits.find('e');
    const bool tiny = e != std::string::npos && e + 1 < digits.size() && digits[e + 1] == '-';
    out.float_value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  }
  return p;
}

int string_start(const char* p, const char* last) {
  const std::size_t w = word_length(p, last);
  if (w == 0) return (p != last && is_quote(*p)) ? 0 : -1;
  if (p + w != last && is_quote(p[w]) && is_string_prefix(std::string_view(p, w)))
    return static_cast<int>(w);
  return -1;
}

const char* scan_string(const char* p, const char* last, std::string& value, bool& fstring) {
  const char* const start = p;
  const int prefix_len = string_start(p, last);
  bool raw = false, bytes = false;
  for (int i = 0; i < prefix_len; ++i) {
    const char c = static_cast<char>(p[i] | 0x20);
    raw |= c == 'r';
    bytes |= c == 'b';
    fstring |= c == 'f';
  }
  p += prefix_len;
  const char q = *p;
  const bool triple = last - p >= 3 && p[1] == q && p[2] == q;
  p += triple ? 3 : 1;
  for (;;) {
    if (p == last || (!triple && *p == '\n'))
      throw grammar::SyntaxError{start, 1, triple ? "unterminated triple-quoted string literal"
                                                  : "unterminated string literal"};
    if (*p == q && (!triple || (last - p >= 3 && p[1] == q && p[2] == q))) return p + (triple ? 3 : 1);
    if (*p == '\\' && p + 1 != last) {
      if (raw) {  // kept verbatim, but the escaped character never ends the string
        value += *p++;
        if (*p == '\r' && p + 1 != last && p[1] == '\n') ++p;  // CRLF is one newline
        value += *p++;
      } else {
        p = unescape(p + 1, last, bytes, value);
      }
      continue;
    }
    if (*p == '\r' && p + 1 != last && p[1] == '\n') {  // newlines in the value are '\n'
      ++p;
      continue;
    }
    value += *p++;
  }
}

namespace {

// Skips balanced brackets from p until an unmatched closer at depth 0 (returned) or `last`.
// If `open` is set, p points at that opener and the scan stops after its closer instead.
// `top_for` is set when the keyword 'for' appears directly inside (a comprehension).
const char* skip_balanced(const char* p, const char* last, bool open, bool& top_for) {
  std::vector<char> stack;
  if (open) stack.push_back(*p++);
  const std::size_t top = stack.size();
  while (p != last) {
    p = skip_blanks(p, last);
    if (p == last) break;
    const char c = *p;
    if (int pre = string_start(p, last); pre >= 0) {
      std::string ignored;
      bool f = false;
      p = scan_string(p, last, ignored, f);
    } else if (is_ident_start(c)) {
      const std::size_t w = word_length(p, last);
      if (stack.size() == top && std::string_view(p, w) == "for") top_for = true;
      p += w;
    } else if (c == '(' || c == '[' || c == '{') {
      stack.push_back(c);
      ++p;
    } else if (c == ')' || c == ']' || c == '}') {
      if (stack.empty()) return p;  // closes the enclosing bracket: the caller's
      const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (stack.back() != want) throw grammar::SyntaxError{p, 1, std::string("unmatched '") + c + "'"};
      stack.pop_back();
      ++p;
      if (open && stack.empty()) return p;
    } else {
      ++p;
    }
  }
  if (!stack.empty())
    throw grammar::SyntaxError{p, 1, std::string("'") + stack.back() + "' was never closed"};
  return p;
}

}  // namespace

const char* skip_display(const char* p, const char* last, std::string& what) {
  const bool list = *p == '[';
  bool comprehension = false;
  const char* end = skip_balanced(p, last, true, comprehension);
  what = list ? (comprehension ? "list comprehensions" : "list literals")
              : (comprehension ? "dict or set comprehensions" : "dict or set literals");
  return end;
}

const char* skip_comprehension(const char* p, const char* last) {
  bool ignored = false;
  return skip_balanced(p, last, false, ignored);
}

}  // namespace flexjit::dsl::scan

#include "tools/npy_header.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace flexjit::tools {
namespace {

// Messages quote at most this much of the header: it may be tens of kilobytes.
constexpr std::size_t kQuoteChars = 40;

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (!take('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr" && !seen_descr) {
        seen_descr = true;
        if (peek() == '[') fail("structured dtypes are not supported (bool, int, uint and float arrays are)");
        h.descr = string_literal();
      } else if (key == "fortran_order" && !seen_order) {
        seen_order = true;
        h.fortran_order = boolean();
      } else if (key == "shape" && !seen_shape) {
        seen_shape = true;
        h.shape = tuple_of_sizes();
      } else {
        fail(fmt::format("key '{}' is unexpected or repeated in the .npy header", quote(key)));
      }
      if (!take(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the .npy header dict");
    for (auto [seen, key] : {std::pair{seen_descr, "descr"}, {seen_order, "fortran_order"}, {seen_shape, "shape"}})
      if (!seen) fail(fmt::format("the .npy header has no '{}' entry", key));
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(what); }

  static std::string quote(std::string_view s) {
    return s.size() <= kQuoteChars ? std::string(s) : std::string(s.substr(0, kQuoteChars)) + "...";
  }

  [[noreturn]] void fail_here(std::string_view wanted) const {
    if (pos_ >= text_.size()) fail(fmt::format("the .npy header ends where {} was expected", wanted));
    fail(fmt::format("the .npy header has '{}' at byte {} where {} was expected",
                     quote(text_.substr(pos_, 1)), pos_, wanted));
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  bool take(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!take(c)) fail_here(fmt::format("'{}'", c));
  }

  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail_here("a quoted string");
    const std::size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos) fail("the .npy header has an unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }

  bool boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, {std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail_here("True or False");
  }

  // (), (5,), (2, 3), (2, 3,)
  std::vector<std::int64_t> tuple_of_sizes() {
    std::vector<std::int64_t> shape;
    expect('(');
    while (!take(')')) {
      shape.push_back(size());
      if (!take(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::int64_t size() {
    if (peek() == '-') fail("negative size in the shape of the .npy header");
    const std::size_t begin = pos_;
    std::int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
        fail(fmt::format("size {}... in the shape of the .npy header is too large", quote(text_.substr(begin, pos_ - begin))));
      value = value * 10 + digit;
    }
    if (pos_ == begin) fail_here("a size");
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

NpyHeader parse_npy_header(std::string_view text) { return HeaderParser(text).parse(); }

}  // namespace flexjit::tools

#pragma once
// The grammar's skipper: blanks, comments and backslash continuations. Newlines are skipped
// too: the line splitter only hands the grammar a newline that is inside brackets, inside a
// string or after a backslash, which are exactly the places Python ignores it.
#include <boost/spirit/home/x3/core/parser.hpp>

namespace flexjit::dsl::grammar {

namespace x3 = boost::spirit::x3;

struct skipper_parser : x3::parser<skipper_parser> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    const It start = first;
    while (first != last) {
      const char c = *first;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++first;
      } else if (c == '#') {
        while (first != last && *first != '\n') ++first;
      } else if (c == '\\' && first + 1 != last && (first[1] == '\n' || first[1] == '\r')) {
        first += 2;
      } else {
        break;
      }
    }
    return first != start;
  }
};

}  // namespace flexjit::dsl::grammar

#pragma once
// The grammar's primitive parsers. Each one pre-skips, recognizes one whole token with the
// scanners of scan.hpp and, where it has an attribute, fills a pt:: token with its text and
// offsets. Included by grammar_def.hpp only.
#include <array>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/spirit/home/x3/core/parser.hpp>
#include <boost/spirit/home/x3/core/skip_over.hpp>
#include <boost/spirit/home/x3/support/context.hpp>
#include <boost/spirit/home/x3/support/traits/move_to.hpp>

#include "dsl/lines.hpp"
#include "dsl/parse_state.hpp"
#include "dsl/parse_tree.hpp"
#include "dsl/scan.hpp"

namespace flexjit::dsl::grammar {

namespace x3 = boost::spirit::x3;

namespace detail {

template <typename Ctx>
const char* buffer_of(Ctx const& ctx) {
  return x3::get<state_tag>(ctx).buffer;
}

template <typename T, typename Attr>
void store(T&& value, Attr& attr) {
  if constexpr (!std::is_same_v<Attr, x3::unused_type>) x3::traits::move_to(std::forward<T>(value), attr);
}

template <typename Token, typename Ctx>
void tag(Token& t, const char* b, const char* e, Ctx const& ctx) {
  t.begin = static_cast<std::size_t>(b - buffer_of(ctx));
  t.end = static_cast<std::size_t>(e - buffer_of(ctx));
}

}  // namespace detail

// One whole token with an attribute: pre-skip, then Derived::recognize(first, last, ctx, token) fills
// the token and returns where it ends (null: no match here); the token gets its offsets, is
// stored and consumed.
template <typename Derived, typename Token>
struct scanned_token : x3::parser<Derived> {
  using attribute_type = Token;
  static bool const has_attribute = true;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    Token t;
    const char* end = Derived::recognize(first, last, ctx, t);
    if (!end) return false;
    detail::tag(t, first, end, ctx);
    detail::store(std::move(t), attr);
    first = end;
    return true;
  }
};

// A keyword, operator or delimiter out of a fixed set ("+", "-" or "not in", "in").
// Matches whole tokens only, so "<" never matches the start of "<<=" and "if" never "iffy".
template <bool HasAttribute>
struct token_parser : x3::parser<token_parser<HasAttribute>> {
  using attribute_type = std::conditional_t<HasAttribute, pt::OpTok, x3::unused_type>;
  static bool const has_attribute = HasAttribute;

  std::array<std::string_view, 20> alternatives{};
  std::size_t count = 0;

  template <typename... S>
    requires(std::is_convertible_v<S, std::string_view> && ...)
  constexpr explicit token_parser(S... spellings)
      : alternatives{std::string_view(spellings)...}, count(sizeof...(S)) {}

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    const char* p = first;
    const bool word = p != last && is_ident_start(*p);
    const std::size_t len = word ? scan::word_length(p, last) : scan::operator_length(p, last);
    if (len == 0) return false;
    const std::string_view token(p, len);
    for (std::size_t i = 0; i < count; ++i) {
      const std::string_view alt = alternatives[i];
      const auto space = alt.find(' ');
      const char* end = nullptr;
      if (space == std::string_view::npos) {
        if (alt == token) end = p + len;
      } else if (alt.substr(0, space) == token) {  // "not in", "is not"
        const char* q = scan::skip_blanks(p + len, last);
        const std::size_t len2 = scan::word_length(q, last);
        if (std::string_view(q, len2) == alt.substr(space + 1)) end = q + len2;
      }
      if (!end) continue;
      if constexpr (HasAttribute) {
        pt::OpTok t;
        t.text = std::string(alt);
        detail::tag(t, p, end, ctx);
        detail::store(std::move(t), attr);
      }
      first = end;
      return true;
    }
    return false;
  }
};

template <typename... S>
constexpr token_parser<true> tok(S... spellings) {
  return token_parser<true>(spellings...);
}
template <typename... S>
constexpr token_parser<false> lit(S... spellings) {
  return token_parser<false>(spellings...);
}

// An identifier that is not a keyword (and not the prefix of a string literal like r"...").
struct name_parser : scanned_token<name_parser, pt::NameTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const&, pt::NameTok& t) {
    const std::size_t len = scan::word_length(first, last);
    if (len == 0 || scan::string_start(first, last) >= 0) return nullptr;
    const std::string_view word(first, len);
    if (scan::is_keyword(word)) return nullptr;
    t.id = std::string(word);
    return first + len;
  }
};

// True, False, None and the ellipsis.
struct const_parser : scanned_token<const_parser, pt::ConstTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const&, pt::ConstTok& t) {
    std::size_t len = scan::word_length(first, last);
    std::string_view text(first, len);
    if (len == 0) {
      len = scan::operator_length(first, last);
      text = std::string_view(first, len);
      if (text != "...") return nullptr;
    } else if (text != "True" && text != "False" && text != "None") {
      return nullptr;
    }
    t.text = std::string(text);
    return first + len;
  }
};

struct number_parser : scanned_token<number_parser, pt::NumberTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const& ctx, pt::NumberTok& t) {
    return scan::scan_number(first, last, detail::buffer_of(ctx), t);
  }
};

// One string literal, or several adjacent ones ("a" "b"), concatenated as Python does.
struct string_parser : scanned_token<string_parser, pt::StringTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const&, pt::StringTok& t) {
    if (scan::string_start(first, last) < 0) return nullptr;
    const char* p = scan::scan_string(first, last, t.value, t.fstring);
    for (;;) {
      const char* next = scan::skip_blanks(p, last);
      if (scan::string_start(next, last) < 0) return p;
      p = scan::scan_string(next, last, t.value, t.fstring);
    }
  }
};

// [ ... ] and { ... } displays, skipped whole: flexjit has no lists, dicts or sets.
struct display_parser : scanned_token<display_parser, pt::SkippedTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const&, pt::SkippedTok& t) {
    if (first == last || (*first != '[' && *first != '{')) return nullptr;
    return scan::skip_display(first, last, t.what);
  }
};

// "for ... in ..." inside brackets, up to the closing bracket.
struct comprehension_parser : scanned_token<comprehension_parser, pt::SkippedTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const&, pt::SkippedTok& t) {
    const std::string_view word(first, scan::word_length(first, last));
    if (word != "for" && word != "async") return nullptr;
    t.what = "generator expressions";
    return scan::skip_comprehension(first, last);
  }
};

// Succeeds at the end of the logical line (only blanks and comments left).
struct end_parser : x3::parser<end_parser> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr&) const {
    x3::skip_over(first, last, ctx);
    return first == last;
  }
};

// Consumes the rest of the line: an unsupported statement is not parsed any further.
struct rest_parser : x3::parser<rest_parser> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    first = last;
    return true;
  }
};

// Rejects *args, **kwargs and the '/' and '*' markers in parameter lists: the AST has no
// place for them. Consumes nothing.
struct plain_parameter_guard : x3::parser<plain_parameter_guard> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr&) const {
    const char* p = scan::skip_blanks(first, last);
    const std::string_view op(p, scan::operator_length(p, last));
    if (op != "*" && op != "**" && op != "/") return true;
    const char* next = scan::skip_blanks(p + op.size(), last);
    const std::string_view after(next, scan::operator_length(next, last));
    const char* what = op == "/"    ? "positional-only parameters ('/')"
                       : op == "**" ? "variadic keyword parameters ('**kwargs')"
                       : (after == "," || after == ")" || after == ":")
                           ? "keyword-only parameters ('*')"
                           : "variadic parameters ('*args')";
    throw SyntaxError{p, op.size(), std::string(what) + " are not supported", true};
  }
};

// The soft keyword 'match' when it starts a match statement ("match x:"), not a name.
struct match_parser : scanned_token<match_parser, pt::OpTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const& ctx, pt::OpTok& t) {
    const std::size_t len = scan::word_length(first, last);
    if (std::string_view(first, len) != "match") return nullptr;
    const char* line_last = x3::get<state_tag>(ctx).line_last;
    if (!line_last || *line_last != ':') return nullptr;
    const char* next = scan::skip_blanks(first + len, last);
    const std::string_view op(next, scan::operator_length(next, last));
    if (next == last || op == ":" || op == "=" || op == "." || op == "," || op == ")" ||
        (op.size() >= 2 && op.back() == '=' && op != "==" && op != "!=" && op != "<=" && op != ">="))
      return nullptr;
    t.text = "match";
    return first + len;
  }
};

// Leading dots of a relative import; matches the empty string too.
struct dots_parser : scanned_token<dots_parser, pt::OpTok> {
  template <typename Ctx>
  static const char* recognize(const char* first, const char* last, Ctx const&, pt::OpTok& t) {
    const char* p = first;
    while (p != last && (*p == '.' || *p == ' ' || *p == '\t')) ++p;
    while (p != first && p[-1] != '.') --p;  // trailing blanks are not part of it
    for (const char* q = first; q != p; ++q)
      if (*q == '.') t.text += '.';
    return p;
  }
};

}  // namespace flexjit::dsl::grammar

namespace boost::spirit::x3 {

// What the error handler reports as expected ("expected ':'").
template <bool A>
struct get_info<flexjit::dsl::grammar::token_parser<A>> {
  using result_type = std::string;
  std::string operator()(flexjit::dsl::grammar::token_parser<A> const& p) const {
    std::string out;
    for (std::size_t i = 0; i < p.count; ++i)
      out += (i ? " or '" : "'") + std::string(p.alternatives[i]) + "'";
    return out;
  }
};

template <>
struct get_info<flexjit::dsl::grammar::name_parser> {
  using result_type = std::string;
  std::string operator()(flexjit::dsl::grammar::name_parser const&) const { return "a name"; }
};

template <>
struct get_info<flexjit::dsl::grammar::end_parser> {
  using result_type = std::string;
  std::string operator()(flexjit::dsl::grammar::end_parser const&) const { return "end of line"; }
};

}  // namespace boost::spirit::x3

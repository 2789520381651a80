#pragma once
// Position tagging in the style of x3::annotate_on_success: rule IDs derive from
// annotate_position, and X3 calls on_success with the matched range after every successful
// rule; attributes that are pt::Tagged record it as byte offsets into the file. Tokens are
// left alone: their parsers tagged them with the token itself, which is narrower than the
// rule that produced them ("else" rather than "else:").
#include <type_traits>

#include <boost/spirit/home/x3/support/context.hpp>

#include "dsl/parse_state.hpp"
#include "dsl/parse_tree.hpp"

namespace flexjit::dsl::grammar {

namespace x3 = boost::spirit::x3;

template <typename T>
inline constexpr bool is_token_v =
    std::is_same_v<T, pt::NameTok> || std::is_same_v<T, pt::OpTok> ||
    std::is_same_v<T, pt::NumberTok> || std::is_same_v<T, pt::StringTok> ||
    std::is_same_v<T, pt::ConstTok> || std::is_same_v<T, pt::SkippedTok>;

struct annotate_position {
  template <typename It, typename Attr, typename Ctx>
  void on_success(It const& first, It const& last, Attr& attr, Ctx const& ctx) const {
    if constexpr (std::is_base_of_v<pt::Tagged, Attr> && !is_token_v<Attr>) {
      const char* buffer = x3::get<state_tag>(ctx).buffer;
      attr.begin = static_cast<std::size_t>(first - buffer);
      attr.end = static_cast<std::size_t>(last - buffer);
    }
  }
};

}  // namespace flexjit::dsl::grammar

// The one translation unit that instantiates the X3 grammar.
#include <type_traits>

#include "dsl/grammar_def.hpp"
#include "dsl/line_parser.hpp"

namespace flexjit::dsl::grammar {

BOOST_SPIRIT_INSTANTIATE(line_type, iterator_type, context_type)

bool parse_line(const char* first, const char* last, ParseState& state, pt::Line& out) {
  static const skipper_parser skipper{};
  auto const skip_context = x3::make_context<x3::skipper_tag>(skipper);
  auto const context = x3::make_context<state_tag>(state, skip_context);
  static_assert(std::is_same_v<std::remove_const_t<decltype(context)>, context_type>,
                "parse_line must call the instantiated parse_rule");
  const char* it = first;
  return line_rule().parse(it, last, context, x3::unused, out);
}

}  // namespace flexjit::dsl::grammar

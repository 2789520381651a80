#pragma once
// collapse<Node>[p]: parses p into a Node (a precedence level: Chain, TernaryX or PrimaryX)
// and hands on just its only operand when the level matched nothing of its own. Without it
// every name would come back wrapped in a dozen one-element levels (a heap node each); with
// it, `x` is a NameTok and `a + b` a single Chain. The Node keeps its source range (Tagged).
#include <utility>

#include <boost/spirit/home/x3/core/parser.hpp>
#include <boost/spirit/home/x3/core/skip_over.hpp>
#include <boost/spirit/home/x3/support/context.hpp>
#include <boost/spirit/home/x3/support/traits/move_to.hpp>

#include "dsl/parse_state.hpp"
#include "dsl/parse_tree.hpp"

namespace flexjit::dsl::grammar {

namespace x3 = boost::spirit::x3;

// The operand a level stands for when it has nothing of its own, or null.
inline pt::Expr* sole_operand(pt::Chain& c) { return c.rest.empty() ? &c.first : nullptr; }
inline pt::Expr* sole_operand(pt::TernaryX& t) { return t.tail ? nullptr : &t.body; }
inline pt::Expr* sole_operand(pt::PrimaryX& p) { return p.trailers.empty() ? &p.atom : nullptr; }

template <typename Node, typename Subject>
struct collapse_directive : x3::unary_parser<Subject, collapse_directive<Node, Subject>> {
  using base_type = x3::unary_parser<Subject, collapse_directive<Node, Subject>>;
  using attribute_type = pt::Expr;
  static bool const has_attribute = true;

  constexpr collapse_directive(Subject const& subject) : base_type(subject) {}

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr& attr) const {
    It begin = first;
    x3::skip_over(begin, last, ctx);
    Node node;
    if (!this->subject.parse(first, last, ctx, rctx, node)) return false;
    if (pt::Expr* only = sole_operand(node)) {
      x3::traits::move_to(std::move(*only), attr);
    } else {
      const char* buffer = x3::get<state_tag>(ctx).buffer;
      node.begin = static_cast<std::size_t>(begin - buffer);
      node.end = static_cast<std::size_t>(first - buffer);
      x3::traits::move_to(pt::Expr(std::move(node)), attr);
    }
    return true;
  }
};

template <typename Node>
struct collapse_gen {
  template <typename Subject>
  constexpr collapse_directive<Node, typename x3::extension::as_parser<Subject>::value_type>
  operator[](Subject const& subject) const {
    return {x3::as_parser(subject)};
  }
};

template <typename Node>
inline constexpr collapse_gen<Node> collapse{};

}  // namespace flexjit::dsl::grammar

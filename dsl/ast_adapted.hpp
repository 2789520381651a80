#pragma once
// Boost.Fusion adaptation of the parse-tree structs, so X3 can fill their members from
// sequence parsers. Only the members listed here are synthesized; Tagged offsets are set by
// the annotation handler. Included by grammar_def.hpp only.
#include <boost/fusion/include/adapt_struct.hpp>

#include "dsl/parse_tree.hpp"

BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::Link, op, operand)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::Chain, first, rest)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::UnaryX, op, operand)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::Arg, keyword, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::CallTrailer, open, args, comprehension)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::IndexItem, value, slice)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::IndexTrailer, open, items)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::AttrTrailer, dot, name)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::PrimaryX, atom, trailers)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::ParenX, open, items, trailing_comma, comprehension)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::TernaryTail, if_kw, cond, orelse)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::TernaryX, body, tail)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::ParamX, name, annotation, default_value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::LambdaParamX, name, default_value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::LambdaX, kw, params, body)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::StarredX, star, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::WalrusX, target, op, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::ExprList, items, trailing_comma)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::AnnTail, colon, annotation, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::AugTail, op, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::AssignLink, eq, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::ExprStmtX, first, ann, aug, assigns)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::ReturnX, kw, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::ImportNameX, parts, alias)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::ImportX, kw, names)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::FromX, kw, dots, parts, names)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::AssertX, kw, cond, message)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::DecoratorX, at, value)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::DefX, kw, name, params, returns)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::CondX, kw, cond)
BOOST_FUSION_ADAPT_STRUCT(flexjit::dsl::pt::Line, header, simple)

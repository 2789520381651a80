#pragma once
// AST -> IR: name resolution, declarations (captures, runtime scalars, constants, block
// indices), inlining of functions, factories, lambdas and mask combinators, Python's typing
// rules, and the checks that make mask_mod/score_mod/sink well-formed. Reports the user's
// mistakes as CompileError at the offending token.
#include "ir/ir.hpp"
#include "dsl/ast.hpp"
#include "dsl/source.hpp"

#include <cstdint>

namespace flexjit::compiler {

// The most IR nodes lowering may make for one program, each inlined call counting as one more.
// Every call is inlined, so a function that calls another twice, nested 40 deep, would make 2^40
// of them: more is a compile error at the call or statement that crosses the limit, "program too
// large (N nodes, limit M)" (docs/language.md). The example programs make at most about 100 (the
// depth limit stops straight-line code long before this one). The passes after lowering are
// linear in the nodes but cost about 10 us each, so this keeps `check` of the largest program
// allowed to a second or two.
inline constexpr std::uint64_t kMaxLoweredNodes = 100'000;

ir::Program lower(const dsl::SourceFile& file, const dsl::ast::Module& module);

// How many scopes name lookups have searched on this thread: the work of resolving names, which
// grows with the number of statements times how deeply functions nest, never with the statements
// squared (tests/compiler/scope_chain_test.cpp compares programs of N and 4N statements).
std::uint64_t scopes_searched();

// `t.shape` makes a shape value (a hidden runtime scalar) for every axis; this keeps those the
// mods or the asserts read. A recursive walk of the mods: call it after the depth checks
// (compiler/pipeline.cpp).
void drop_unread_shape_values(ir::Program& program);

}  // namespace flexjit::compiler

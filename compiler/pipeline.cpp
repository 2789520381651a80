#include "compiler/pipeline.hpp"

#include <fmt/format.h>

#include "dsl/diagnostics.hpp"
#include "ir/cse.hpp"
#include "ir/depth.hpp"
#include "compiler/lower.hpp"
#include "ir/simplify.hpp"
#include "dsl/parser.hpp"

namespace flexjit::compiler {

namespace {

// The passes after lowering recurse on the expression tree; this keeps them inside the stack.
void check_depth(const dsl::SourceFile& file, const std::optional<ir::Mod>& mod) {
  if (!mod) return;
  const std::size_t depth = ir::inlined_depth(mod->body);
  if (depth > kMaxExpressionDepth)
    dsl::user_error(file, mod->pos,
                    fmt::format("program too large: {} nests {} operations deep once its variables are substituted "
                                "(limit {})",
                                ir::mod_name(mod->kind), depth, kMaxExpressionDepth));
}

void optimize(std::optional<ir::Mod>& mod) {
  if (!mod) return;
  mod->body = ir::simplify(mod->body);
  mod->body = ir::common_subexpressions(mod->body);
}

}  // namespace

ir::Program build_raw_ir(const dsl::SourceFile& file) {
  dsl::ast::Module ast = dsl::parse(file);
  ir::Program program = lower(file, ast);
  check_depth(file, program.mask_mod);
  check_depth(file, program.score_mod);
  check_depth(file, program.sink);
  drop_unread_shape_values(program);  // a recursive walk: after the depth checks
  return program;
}

ir::Program build_ir(const dsl::SourceFile& file) {
  ir::Program program = build_raw_ir(file);
  optimize(program.mask_mod);
  optimize(program.score_mod);
  optimize(program.sink);
  return program;
}

}  // namespace flexjit::compiler

#include "compiler/pipeline.hpp"

#include "ir/cse.hpp"
#include "compiler/lower.hpp"
#include "ir/simplify.hpp"
#include "dsl/parser.hpp"

namespace flexjit::compiler {

namespace {

void optimize(std::optional<ir::Mod>& mod) {
  if (!mod) return;
  mod->body = ir::simplify(mod->body);
  mod->body = ir::common_subexpressions(mod->body);
}

}  // namespace

ir::Program build_raw_ir(const dsl::SourceFile& file) {
  dsl::ast::Module ast = dsl::parse(file);
  return lower(file, ast);
}

ir::Program build_ir(const dsl::SourceFile& file) {
  ir::Program program = build_raw_ir(file);
  optimize(program.mask_mod);
  optimize(program.score_mod);
  optimize(program.sink);
  return program;
}

}  // namespace flexjit::compiler

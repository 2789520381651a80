#pragma once
// The front end as one straight line: text -> AST -> IR -> simplified IR with shared
// subexpressions. Each step is one pass behind its own header.
#include "ir/ir.hpp"
#include "dsl/source.hpp"

namespace flexjit::compiler {

// Throws dsl::CompileError on the user's mistakes.
ir::Program build_ir(const dsl::SourceFile& file);

// The same, stopping after lowering (no simplification), for tests and `flexjit emit ir --raw`.
ir::Program build_raw_ir(const dsl::SourceFile& file);

}  // namespace flexjit::compiler

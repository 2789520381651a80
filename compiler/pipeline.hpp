#pragma once
// The front end as one straight line: text -> AST -> IR -> simplified IR with shared
// subexpressions. Each step is one pass behind its own header.
#include "ir/ir.hpp"
#include "dsl/source.hpp"

#include <cstddef>

namespace flexjit::compiler {

// The deepest expression a mod may have once its variables are substituted (ir::inlined_depth):
// the passes after lowering recurse on it, and this keeps them well inside an 8 MB stack, also
// under AddressSanitizer. Real mods are a few dozen deep; 2000 statements `x = x * c + q_idx`
// are 4000. A deeper program is a compile error, "program too large".
inline constexpr std::size_t kMaxExpressionDepth = 4096;

// Throws dsl::CompileError on the user's mistakes.
ir::Program build_ir(const dsl::SourceFile& file);

// The same, stopping after lowering (no simplification), for tests and `flexjit emit ir --raw`.
ir::Program build_raw_ir(const dsl::SourceFile& file);

}  // namespace flexjit::compiler

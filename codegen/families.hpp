#pragma once
// Family selection: the first family of the table (families.cpp) that serves a target.
#include "codegen/family.hpp"
#include "dsl/source.hpp"
#include "ir/ir.hpp"

namespace flexjit::codegen {

// Throws flexjit::Error naming the target and, for each family, why it does not serve it.
const KernelFamily& select_family(const compiler::KernelTarget& target);

// The whole compile path of one kernel: plan, select, generate. `source` (optional) lets the
// generated code quote the program's lines in comments.
GeneratedKernel generate_kernel(const ir::Program& program, const compiler::KernelTarget& target,
                                const dsl::SourceFile* source = nullptr);

}  // namespace flexjit::codegen

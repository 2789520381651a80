#pragma once
// Family selection: the first family of the table (families.cpp) that serves a target.
#include "codegen/family.hpp"
#include "dsl/source.hpp"
#include "ir/ir.hpp"

#include <string>
#include <vector>

namespace flexjit::codegen {

// The family target.family names, or else the first of the table that serves the target and
// program. Throws flexjit::UnsupportedError naming the target and, for each family, why it does
// not serve it (ArgumentError for an unknown family name).
const KernelFamily& select_family(const compiler::KernelTarget& target, const ir::Program& program);

// Why `family` does not serve the target and program ("" when it does): its own refusal, or that it
// takes one head dim where the target's v has its own.
std::string family_refusal(const KernelFamily& family, const compiler::KernelTarget& target,
                           const ir::Program& program);

// The family of that name, or null.
const KernelFamily* find_family(const std::string& name);

// The families' names, in order of preference ("sm90_fwd", "sm80_fwd").
std::vector<std::string> family_names();

// The whole compile path of one kernel: plan, select, generate. `source` (optional) lets the
// generated code quote the program's lines in comments.
GeneratedKernel generate_kernel(const ir::Program& program, const compiler::KernelTarget& target,
                                const dsl::SourceFile* source = nullptr);

}  // namespace flexjit::codegen

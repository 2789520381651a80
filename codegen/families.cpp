#include "codegen/families.hpp"

#include <fmt/format.h>

#include "codegen/sm80_fwd/family.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen {
namespace {

// In order of preference. Adding a family: its folder under codegen/ and templates/, one line here.
const KernelFamily* const kFamilies[] = {
    &sm80_fwd::family(),
};

}  // namespace

const KernelFamily& select_family(const compiler::KernelTarget& target) {
  std::string reasons;
  for (const KernelFamily* f : kFamilies) {
    const std::string why = f->refusal(target);
    if (why.empty()) return *f;
    reasons += fmt::format("\n  {}: {}", f->name(), why);
  }
  throw Error(fmt::format("no kernel for the {} pass at head dim {}, {}, {}:{}", compiler::pass_name(target.pass),
                          target.head_dim, compiler::element_name(target.dtype), target.arch, reasons));
}

GeneratedKernel generate_kernel(const ir::Program& program, const compiler::KernelTarget& target,
                                const dsl::SourceFile* source) {
  const KernelFamily& family = select_family(target);
  return family.generate(compiler::make_plan(program, target, source));
}

}  // namespace flexjit::codegen

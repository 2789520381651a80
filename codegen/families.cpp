#include "codegen/families.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

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
  std::vector<std::string> reasons;
  for (const KernelFamily* f : kFamilies) {
    std::string why = f->refusal(target);
    if (why.empty()) return *f;
    reasons.push_back(fmt::format("{}: {}", f->name(), why));
  }
  // One family: its reason is the whole story. Several: each one's.
  if (reasons.size() == 1) throw UnsupportedError(kFamilies[0]->refusal(target));
  throw UnsupportedError(fmt::format("no kernel for the {} pass at head dim {}, {}, {}:\n  {}",
                                     compiler::pass_name(target.pass), target.head_dim,
                                     compiler::element_name(target.dtype), target.arch, fmt::join(reasons, "\n  ")));
}

GeneratedKernel generate_kernel(const ir::Program& program, const compiler::KernelTarget& target,
                                const dsl::SourceFile* source) {
  const KernelFamily& family = select_family(target);
  return family.generate(compiler::make_plan(program, target, source));
}

}  // namespace flexjit::codegen

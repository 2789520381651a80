#include "codegen/families.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "codegen/decode/family.hpp"
#include "codegen/sm80_bwd/family.hpp"
#include "codegen/sm90_bwd/family.hpp"
#include "codegen/sm80_fwd/family.hpp"
#include "codegen/sm90_fwd/family.hpp"
#include "dsl/quoted.hpp"
#include "flexjit/error.hpp"

namespace flexjit::codegen {
namespace {

// In order of preference. Adding a family: its folder under codegen/ and templates/, one line here.
const KernelFamily* const kFamilies[] = {
    &sm90_fwd::family(),
    &sm80_fwd::family(),
    &decode::family(),
    &decode::mla_sm90_family(),  // MLA's absorbed 576 / 512 on sm_90a (1.8-2.8x decode_mla, bench/NOTES.md)
    &decode::mla_family(),  // v of its own head dim (MLA)
    &sm90_fwd::chunk_family(),  // sm_90a (api/pass_kernels.cpp: sm80_chunk where it spills)
    &sm80_fwd::chunk_family(),
    &sm90_bwd::family(),  // sm_90a, head dims 64, 128, 256 and 192 / 128 (api/pass_kernels.cpp: sm80_bwd where it spills)
    &sm80_bwd::family(),
};

std::string target_text(const compiler::KernelTarget& target) {
  return fmt::format("the {} pass at head dim {}{}, {}, {}", compiler::pass_name(target.pass), target.head_dim,
                     target.dv() != target.head_dim ? fmt::format(" (v: {})", target.dv()) : "",
                     compiler::element_name(target.dtype),
                     compiler::arch_number(target.arch) ? target.arch : dsl::quoted(target.arch));
}

// KernelTarget::family names one family: that one or an error.
const KernelFamily& named_family(const compiler::KernelTarget& target, const ir::Program& program) {
  const KernelFamily* f = find_family(target.family);
  if (f == nullptr)
    throw ArgumentError(fmt::format("unknown kernel family {} (the families are {})", dsl::quoted(target.family),
                                    fmt::join(family_names(), ", ")));
  if (f->pass() != target.pass)
    throw UnsupportedError(fmt::format("kernel family {} runs the {} pass, not {}", f->name(),
                                       compiler::pass_name(f->pass()), target_text(target)));
  const std::string why = family_refusal(*f, target, program);
  if (!why.empty())
    throw UnsupportedError(fmt::format("kernel family {} cannot run {}: {}", f->name(), target_text(target), why));
  return *f;
}

}  // namespace

std::string family_refusal(const KernelFamily& f, const compiler::KernelTarget& target, const ir::Program& program) {
  if (program.token_indices && !f.serves_token_lists())
    return fmt::format("token-level selection ('{}: TokenIndices') runs on the decode kernels only (families decode, "
                       "decode_mla and sm90_mla)",
                       program.token_indices->name);
  if (target.dtype == compiler::ElementType::FP8_E4M3 && !f.serves_fp8())
    return "fp8_e4m3 inputs run on the Hopper forward only (family sm90_fwd, sm_90a)";
  if (target.dv() != target.head_dim && !f.serves_value_head_dim())
    return fmt::format("v's head dim {} differs from q and k's {}: this family takes one head dim", target.dv(),
                       target.head_dim);
  return f.refusal(target, program);
}

const KernelFamily* find_family(const std::string& name) {
  for (const KernelFamily* f : kFamilies)
    if (name == f->name()) return f;
  return nullptr;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const KernelFamily* f : kFamilies) names.push_back(f->name());
  return names;
}

const KernelFamily& select_family(const compiler::KernelTarget& target, const ir::Program& program) {
  if (!target.family.empty()) return named_family(target, program);
  std::vector<std::string> reasons;
  for (const KernelFamily* f : kFamilies) {
    if (f->pass() != target.pass) continue;
    std::string why = family_refusal(*f, target, program);
    if (why.empty()) why = f->refusal_unless_named(target);
    if (why.empty()) return *f;
    reasons.push_back(fmt::format("{}: {}", f->name(), why));
  }
  throw UnsupportedError(fmt::format("no kernel for {}:\n  {}", target_text(target), fmt::join(reasons, "\n  ")));
}

GeneratedKernel generate_kernel(const ir::Program& program, const compiler::KernelTarget& target,
                                const dsl::SourceFile* source) {
  const KernelFamily& family = select_family(target, program);
  return family.generate(compiler::make_plan(program, target, source));
}

}  // namespace flexjit::codegen

#include "compiler/param_space.hpp"

#include <fmt/format.h>

#include "dsl/diagnostics.hpp"
#include "flexjit/error.hpp"

namespace flexjit::compiler {
namespace {

ir::SourcePos declared_at(const ir::Program& p, const std::string& name) {
  for (const auto& c : p.captures)
    if (c.name == name) return c.pos;
  for (const auto& s : p.scalars)
    if (s.name == name) return s.pos;
  if (const auto list = p.key_list(); list && list->name == name) return list->pos;
  return {};
}

}  // namespace

void check_param_space(const ir::Program& program, const ParamLayout& params, const GradLayout* grads,
                       const dsl::SourceFile* source) {
  const int grad_bytes = grads ? grads->size : 0;
  const int room = kKernelParamBytes - kFamilyArgsBytes - grad_bytes;
  if (params.size <= room) return;
  // The first field that does not fit names the declaration (fields are laid out in order).
  std::string culprit = params.fields.empty() ? "" : params.fields.back().owner;
  for (const ParamField& f : params.fields)
    if (f.offset + f.size > room) {
      culprit = f.owner;
      break;
    }
  const std::string message = fmt::format(
      "too many bound values for one CUDA kernel: the kernel's parameters run out at '{}'; the program's {} "
      "captured tensors and {} runtime scalars take {} bytes{}, and a kernel's parameters hold {} bytes in all, "
      "{} of them flexjit's own arguments (pack tensors of one kind into one with an extra dimension)",
      culprit, program.captures.size(), program.scalars.size(), params.size,
      grad_bytes > 0 ? fmt::format(" and their gradients' {} more", grad_bytes) : "", kKernelParamBytes,
      kFamilyArgsBytes);
  const ir::SourcePos pos = declared_at(program, culprit);
  if (source) dsl::user_error(*source, pos, message);
  throw UnsupportedError(message);
}

}  // namespace flexjit::compiler

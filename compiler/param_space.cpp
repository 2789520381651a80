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
  // The call's position offsets close the Params: flexjit's own, like the family's arguments.
  int own_bytes = kFamilyArgsBytes, program_bytes = 0;
  for (const ParamField& f : params.fields) {
    if (is_position_offset(f.kind))
      own_bytes += f.size;
    else
      program_bytes = f.offset + f.size;
  }
  const int room = kKernelParamBytes - own_bytes - grad_bytes;
  if (program_bytes <= room) return;
  // The first field that does not fit names the declaration (fields are laid out in order).
  std::string culprit;
  for (const ParamField& f : params.fields)
    if (!is_position_offset(f.kind) && f.offset + f.size > room) {
      culprit = f.owner;
      break;
    }
  const std::string message = fmt::format(
      "too many bound values for one CUDA kernel: the kernel's parameters run out at '{}'; the program's {} "
      "captured tensors and {} runtime scalars take {} bytes{}, and a kernel's parameters hold {} bytes in all, "
      "{} of them flexjit's own arguments (pack tensors of one kind into one with an extra dimension)",
      culprit, program.captures.size(), program.scalars.size(), program_bytes,
      grad_bytes > 0 ? fmt::format(" and their gradients' {} more", grad_bytes) : "", kKernelParamBytes, own_bytes);
  const ir::SourcePos pos = declared_at(program, culprit);
  if (source) dsl::user_error(*source, pos, message);
  throw UnsupportedError(message);
}

}  // namespace flexjit::compiler

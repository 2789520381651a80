#include "compiler/grad_layout.hpp"

#include "ir/gradient_captures.hpp"

namespace flexjit::compiler {

const GradField* GradLayout::find(const std::string& tensor) const {
  for (const GradField& f : fields)
    if (f.tensor == tensor) return &f;
  return nullptr;
}

GradLayout grad_layout(const ir::Program& program) {
  GradLayout layout;
  int offset = 0;
  for (const std::string& name : ir::gradient_captures(program)) {
    GradField f;
    f.tensor = name;
    f.rank = program.find_capture(name)->rank;
    f.offset = offset;
    f.c_name = "g_" + name;
    offset += f.size();
    layout.fields.push_back(std::move(f));
  }
  layout.size = offset > 0 ? offset : 8;
  return layout;
}

}  // namespace flexjit::compiler

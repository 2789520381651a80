#pragma once
// The layout of a backward kernel's `Mods::Grads` struct (its third kernel argument): for each
// captured float tensor that score_mod or sink reads (ir/gradient_captures.hpp), in name order,
// a float pointer to its gradient (null when the call does not ask for it), then the tensor's
// extent and the gradient's stride (in elements) per dimension, all 8 bytes. The generator writes
// the struct and the runtime packs the call's gradients by this same description.
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace flexjit::compiler {

struct GradField {
  std::string tensor;  // the capture
  int rank = 0;
  int offset = 0;      // of the pointer; extents follow at offset + 8 + 8 d, strides after them
  std::string c_name;  // "g_slopes"; extents "g_slopes_size0", strides "g_slopes_stride0"
  int size() const { return 8 + 16 * rank; }
};

struct GradLayout {
  std::vector<GradField> fields;
  int size = 8;  // sizeof(Grads): an unused member keeps an empty struct 8 bytes
  const GradField* find(const std::string& tensor) const;
};

GradLayout grad_layout(const ir::Program& program);

}  // namespace flexjit::compiler

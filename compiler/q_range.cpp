#include "compiler/q_range.hpp"

namespace flexjit::compiler {

QRange q_range(const ir::Program& p) { return index_range(p, kQRangeAxes); }

bool q_range_is_full(const QRange& r) { return index_range_is_full(r, kQRangeAxes); }

}  // namespace flexjit::compiler

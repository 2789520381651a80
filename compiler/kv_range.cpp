#include "compiler/kv_range.hpp"

namespace flexjit::compiler {

KvRange kv_range(const ir::Program& p) { return index_range(p, kKvRangeAxes); }

bool kv_range_is_full(const KvRange& r) { return index_range_is_full(r, kKvRangeAxes); }

}  // namespace flexjit::compiler

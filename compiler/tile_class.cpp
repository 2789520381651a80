#include "compiler/tile_class.hpp"

#include <algorithm>

namespace flexjit::compiler {

const char* tile_class_name(TileClass c) {
  switch (c) {
    case TileClass::Empty: return "empty";
    case TileClass::Full: return "full";
    case TileClass::Partial: return "partial";
  }
  return "?";
}

TileClass tile_class_of(BoolInterval mask) { return static_cast<TileClass>(bi_tile_class(mask)); }

TileClass classify_tile(const ir::Program& p, const TileQuery& t) {
  // Only in-range rows and keys count: the kernel masks the rest whatever the class says.
  const std::int64_t q_end = std::min(t.q1, t.Tq), k_end = std::min(t.k1, t.Tkv);
  if (t.q0 >= q_end || t.k0 >= k_end) return TileClass::Empty;
  if (!p.mask_mod) return TileClass::Full;

  ir::BoundsEnv env;
  env.set(ir::kParamBatch, iv_point(t.b)).set(ir::kParamHead, iv_point(t.h));
  env.set(ir::kParamQ, iv_make(t.q0, q_end - 1)).set(ir::kParamKv, iv_make(t.k0, k_end - 1));
  for (const auto& [name, value] : t.scalars) {
    if (auto i = std::get_if<std::int64_t>(&value)) env.set(name, iv_point(*i));
    else if (auto b = std::get_if<bool>(&value)) env.set(name, bi_const(*b));
    // float scalars are not analysed: left unbound
  }
  for (const auto& [name, value] : t.rank0_tensors) {
    if (auto i = std::get_if<std::int64_t>(&value)) env.rank0_ints[name] = iv_point(*i);
    else if (auto b = std::get_if<bool>(&value)) env.rank0_bools[name] = bi_const(*b);
  }
  return tile_class_of(ir::bool_bounds(p.mask_mod->body, env));
}

}  // namespace flexjit::compiler

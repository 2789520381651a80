#include "api/position_reach.hpp"

#include "compiler/plan.hpp"
#include "ir/bounds.hpp"

namespace flexjit::api {

bool may_keep_any(const ir::Program& program, const ir::Env& env, std::int64_t q_offset, std::int64_t Tq,
                  std::int64_t kv_offset, std::int64_t Tkv) {
  if (Tq < 1 || Tkv < 1) return false;
  if (!program.mask_mod) return true;
  // b and h over the grid's range (a mask that reads them is analysed for every entry and head).
  ir::BoundsEnv bounds = compiler::mod_param_ranges();
  bounds.set(ir::kParamQ, IntInterval{q_offset, q_offset + Tq - 1});
  bounds.set(ir::kParamKv, IntInterval{kv_offset, kv_offset + Tkv - 1});
  for (const ir::Scalar& s : program.scalars) {
    const auto it = env.scalars.find(s.name);
    if (it == env.scalars.end()) continue;  // unbound: anything
    if (s.type == ir::Type::Int) bounds.set(s.name, IntInterval{it->second.as_int(), it->second.as_int()});
    if (s.type == ir::Type::Bool) bounds.set(s.name, flexjit::bi_const(it->second.as_bool()));
  }
  return ir::bool_bounds(program.mask_mod->body, bounds).can_true;
}

}  // namespace flexjit::api

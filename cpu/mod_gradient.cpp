#include "cpu/mod_gradient.hpp"

namespace flexjit::cpu {

ModGradient::ModGradient(const std::optional<ir::Mod>& mod, const std::set<std::string>& wanted) {
  if (!mod) {
    constant_slope_ = 1.0f;
    return;
  }
  d_ = ir::differentiate(*mod);
  if (const ir::FloatImm* c = d_->d_score.as<ir::FloatImm>()) constant_slope_ = c->value;
  for (std::size_t k = 0; k < d_->loads.size(); ++k)
    if (wanted.count(d_->loads[k].tensor)) wanted_.push_back(k);
}

float ModGradient::slope(const ir::Env& env) const {
  return constant_slope_ ? *constant_slope_ : ir::evaluate(d_->d_score, env).as_float();
}

void ModGradient::scatter(const ir::Env& env, double weight, CaptureGradients& gradients) const {
  std::vector<std::int64_t> at;
  for (std::size_t k : wanted_) {
    const ir::LoadDerivative& l = d_->loads[k];
    // Only where the forward evaluates the load: elsewhere its indices may be out of range.
    if (!ir::evaluate(l.reached, env).as_bool()) continue;
    at.clear();
    for (const ir::Expr& i : l.indices) at.push_back(ir::evaluate(i, env).as_int());
    gradients.add(l.tensor, at, weight * static_cast<double>(ir::evaluate(l.derivative, env).as_float()));
  }
}

}  // namespace flexjit::cpu

#pragma once
// score_mod's or sink's derivatives (ir/differentiate.hpp) evaluated by the IR interpreter at one
// position: the slope d mod / d score that scales dS into dQ and dK, and the scatter-add of
// weight * d mod / d element into the gradients of the captured tensors asked for. The LLVM back
// end does not compile derivatives yet: a backward evaluates them here whatever back end its
// forward mods use.
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cpu/capture_gradients.hpp"
#include "ir/differentiate.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu {

class ModGradient {
 public:
  // Without a mod: slope 1 (score passes through unchanged) and nothing to scatter. `wanted`:
  // the tensors whose gradients are accumulated; loads of others are skipped. Throws
  // flexjit::UnsupportedError for a body ir::differentiate cannot differentiate (`x ** y` with
  // a varying exponent, ...).
  ModGradient(const std::optional<ir::Mod>& mod, const std::set<std::string>& wanted);

  // d mod / d score at env's position (b, h, q_idx, kv_idx and score set).
  float slope(const ir::Env& env) const;
  // Adds weight * d mod / d element at each wanted load the body evaluates at env's position.
  void scatter(const ir::Env& env, double weight, CaptureGradients& gradients) const;
  bool scatters() const { return !wanted_.empty(); }

 private:
  std::optional<ir::ModDerivatives> d_;
  std::optional<float> constant_slope_;   // when d_score is a constant (score + bias, ...): no evaluation
  std::vector<std::size_t> wanted_;  // indices into d_->loads
};

}  // namespace flexjit::cpu

#include "cpu/mod_gradient.hpp"

#include <algorithm>

#include "cpu/args.hpp"
#include "cpu/compile_cache.hpp"
#include "cpu/llvm_backend.hpp"

namespace flexjit::cpu {

using i64 = std::int64_t;

ModGradient::ModGradient(const std::optional<ir::Mod>& mod, const std::set<std::string>& wanted, const ir::Env& env)
    : env_(env) {
  if (!mod) {
    constant_slope_ = 1.0f;
    return;
  }
  d_ = ir::differentiate(*mod);
  if (const ir::FloatImm* c = d_->d_score.as<ir::FloatImm>()) constant_slope_ = c->value;
  for (std::size_t k = 0; k < d_->loads.size(); ++k)
    if (wanted.count(d_->loads[k].tensor)) wanted_.push_back(k);
}

void ModGradient::slope_row(Workspace& w, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep,
                            const float* x, float* slope) const {
  if (!constant_slope_) return slopes(w, b, h, q, kv0, n, keep, x, slope);
  for (i64 j = 0; j < n; ++j)
    if (keep[j]) slope[j] = *constant_slope_;
}

void ModGradient::scatter_row(Workspace& w, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep,
                              const float* x, const double* weight, CaptureGradients& gradients) const {
  if (!wanted_.empty()) scatter(w, b, h, q, kv0, n, keep, x, weight, gradients);
}

namespace {

class InterpreterGradient final : public ModGradient {
 public:
  InterpreterGradient(const std::optional<ir::Mod>& mod, const std::set<std::string>& wanted, const ir::Env& env)
      : ModGradient(mod, wanted, env) {}

 private:
  static void at(ir::Env& env, i64 b, i64 h, i64 q, i64 kv, float score) {
    env.b = b;
    env.h = h;
    env.q_idx = q;
    env.kv_idx = kv;
    env.score = score;
  }

  void slopes(Workspace& w, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep, const float* x,
              float* slope) const override {
    for (i64 j = 0; j < n; ++j) {
      if (!keep[j]) continue;
      at(w.env, b, h, q, kv0 + j, x[j]);
      slope[j] = ir::evaluate(d_->d_score, w.env).as_float();
    }
  }

  void scatter(Workspace& w, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep, const float* x,
               const double* weight, CaptureGradients& gradients) const override {
    std::vector<i64>& idx = w.indices;
    for (i64 j = 0; j < n; ++j) {
      if (!keep[j]) continue;
      at(w.env, b, h, q, kv0 + j, x[j]);
      for (std::size_t k : wanted_) {
        const ir::LoadDerivative& l = d_->loads[k];
        // Only where the forward evaluates the load: elsewhere its indices may be out of range.
        if (!ir::evaluate(l.reached, w.env).as_bool()) continue;
        idx.clear();
        for (const ir::Expr& i : l.indices) idx.push_back(ir::evaluate(i, w.env).as_int());
        gradients.add(l.tensor, idx, weight[j] * static_cast<double>(ir::evaluate(l.derivative, w.env).as_float()));
      }
    }
  }
};

// The compiled derivatives of one mod, kept per (declarations, body, wanted loads).
struct GradientKey {
  ir::Program decls;
  ir::Expr body;
  std::vector<std::size_t> wanted;
};

std::shared_ptr<const CompiledGradient> compiled(const ir::Program& p, const ir::Mod& mod, const ir::Expr& slope,
                                                 const std::vector<ir::LoadDerivative>& loads,
                                                 const std::vector<std::size_t>& wanted) {
  static CompileCache<GradientKey, CompiledGradient> cache;
  ir::Program decls;
  decls.name = p.name;
  decls.captures = p.captures;
  decls.scalars = p.scalars;
  return cache.get(
      GradientKey{decls, mod.body, wanted},
      [](const GradientKey& a, const GradientKey& b) {
        return a.wanted == b.wanted && same_declarations(a.decls, b.decls) && ir::equal(a.body, b.body);
      },
      [&] { return std::make_shared<const CompiledGradient>(decls, slope, loads); });
}

class NativeGradient final : public ModGradient {
 public:
  NativeGradient(const ir::Program& p, const std::optional<ir::Mod>& mod, const std::set<std::string>& wanted,
                 const ir::Env& env)
      : ModGradient(mod, wanted, env) {
    if (constant_slope_ && wanted_.empty()) return;  // nothing to evaluate
    std::vector<ir::LoadDerivative> loads;
    for (std::size_t k : wanted_) {
      loads.push_back(d_->loads[k]);
      offset_.push_back(rank_total_);
      rank_total_ += d_->loads[k].indices.size();
    }
    code_ = compiled(p, *mod, constant_slope_ ? ir::Expr() : d_->d_score, loads, wanted_);
    bound_.emplace(p, env);
  }

  void check() const override {
    if (bound_) bound_->check();
  }

 private:
  static constexpr i64 kChunk = 256;  // keys per load_row call: bounds the workspace

  void slopes(Workspace&, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep, const float* x,
              float* slope) const override {
    code_->slope_row(*bound_, b, h, q, kv0, n, keep, x, slope);
  }

  // Each wanted load's values over a chunk of keys, then the adds in the interpreter's order
  // (key by key, load by load), so the float64 sums round the same.
  void scatter(Workspace& w, i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep, const float* x,
               const double* weight, CaptureGradients& gradients) const override {
    const std::size_t loads = wanted_.size(), chunk = static_cast<std::size_t>(kChunk);
    w.reached.resize(loads * chunk);
    w.derivative.resize(loads * chunk);
    w.indices.resize(rank_total_ * chunk);
    w.slots.clear();
    for (std::size_t k : wanted_) w.slots.push_back(gradients.slot(d_->loads[k].tensor));
    for (i64 c0 = 0; c0 < n; c0 += kChunk) {
      const i64 m = std::min(kChunk, n - c0);
      for (std::size_t l = 0; l < loads; ++l)
        code_->load_row(l, *bound_, b, h, q, kv0 + c0, m, keep + c0, x + c0, &w.reached[l * chunk],
                        w.indices.data() + offset_[l] * chunk, &w.derivative[l * chunk]);
      for (i64 j = 0; j < m; ++j) {
        if (!keep[c0 + j]) continue;
        const auto jj = static_cast<std::size_t>(j);
        for (std::size_t l = 0; l < loads; ++l) {
          if (!w.reached[l * chunk + jj]) continue;
          const std::size_t rank = d_->loads[wanted_[l]].indices.size();
          w.slots[l].add(w.indices.data() + offset_[l] * chunk + jj * rank, rank,
                         weight[c0 + j] * static_cast<double>(w.derivative[l * chunk + jj]));
        }
      }
    }
  }

  std::shared_ptr<const CompiledGradient> code_;
  std::optional<CpuBinding> bound_;
  std::vector<std::size_t> offset_;  // per wanted load: where its indices start, in ranks
  std::size_t rank_total_ = 0;
};

}  // namespace

std::unique_ptr<ModGradient> interpreter_mod_gradient(const std::optional<ir::Mod>& mod,
                                                      const std::set<std::string>& wanted, const ir::Env& env) {
  return std::make_unique<InterpreterGradient>(mod, wanted, env);
}

std::unique_ptr<ModGradient> llvm_mod_gradient(const ir::Program& p, const std::optional<ir::Mod>& mod,
                                               const std::set<std::string>& wanted, const ir::Env& env) {
  return std::make_unique<NativeGradient>(p, mod, wanted, env);
}

}  // namespace flexjit::cpu

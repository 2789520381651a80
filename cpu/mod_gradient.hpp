#pragma once
// score_mod's or sink's derivatives (ir/differentiate.hpp) as the CPU backward consumes them: one
// query row's keys at a time, bound to one set of scalars and tensors. slope_row gives d mod /
// d score, which scales dS into dQ and dK; scatter_row adds weight * d mod / d element at each
// wanted load the body evaluates into the gradients of the captured tensors. Two
// implementations, as for the forward's mods (row_mods.hpp): the interpreter (the executable
// spec) and LLVM native code (CompiledGradient, llvm_backend.hpp); they agree bit for bit, and
// the backward does not know which it has.
#include <cstddef>
#include <cstdint>
#include <memory>
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
  // What a thread's calls need of their own (the interpreter's position, native code's values of
  // the loads over a chunk of keys): each thread that calls slope_row or scatter_row owns one.
  struct Workspace {
    ir::Env env;
    std::vector<std::uint8_t> reached;
    std::vector<std::int64_t> indices;
    std::vector<float> derivative;
    std::vector<CaptureGradients::Slot> slots;
  };

  virtual ~ModGradient() = default;
  Workspace workspace() const { return Workspace{env_, {}, {}, {}, {}}; }

  // Keys kv0 .. kv0 + n - 1 of query row q of (b, h) where keep[j] != 0, the mod having seen the
  // score x[j]; other entries are neither evaluated nor written. Without a mod the slope is 1.
  //   slope_row:   slope[j] = d mod / d score.
  //   scatter_row: for each such j in order, and each wanted load in the order of
  //                ModDerivatives::loads, where the body evaluates the load: adds
  //                weight[j] * d mod / d element to that element's gradient in `gradients`.
  // The sink's position is (b, h): pass q = kv0 = 0, n = 1. Throws what ir::evaluate throws (the
  // interpreter), or records a load out of range for check() (native code).
  void slope_row(Workspace& w, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0, std::int64_t n,
                 const std::uint8_t* keep, const float* x, float* slope) const;
  void scatter_row(Workspace& w, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0, std::int64_t n,
                   const std::uint8_t* keep, const float* x, const double* weight, CaptureGradients& gradients) const;
  bool scatters() const { return !wanted_.empty(); }
  // Throws std::runtime_error for a load out of range that native code recorded (CpuBinding::check).
  // The interpreter throws at once and never has anything to report.
  virtual void check() const {}

 protected:
  // Throws flexjit::UnsupportedError for a body ir::differentiate cannot differentiate.
  ModGradient(const std::optional<ir::Mod>& mod, const std::set<std::string>& wanted, const ir::Env& env);
  // slope_row when d_score is not a constant.
  virtual void slopes(Workspace& w, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0, std::int64_t n,
                      const std::uint8_t* keep, const float* x, float* slope) const = 0;
  // scatter_row when some load is wanted.
  virtual void scatter(Workspace& w, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0, std::int64_t n,
                       const std::uint8_t* keep, const float* x, const double* weight,
                       CaptureGradients& gradients) const = 0;

  std::optional<ir::ModDerivatives> d_;
  std::optional<float> constant_slope_;  // when d_score is a constant (score + bias, ...): no evaluation
  std::vector<std::size_t> wanted_;      // indices into d_->loads
  const ir::Env& env_;
};

// The derivatives of `mod` (none: slope 1 and nothing to scatter) for the gradients of `wanted`
// (loads of other tensors are skipped), over the scalars and tensors env binds (env must outlive
// the result). Both throw flexjit::UnsupportedError for a body ir::differentiate cannot
// differentiate (`x ** y` with a varying exponent, ...).
std::unique_ptr<ModGradient> interpreter_mod_gradient(const std::optional<ir::Mod>& mod,
                                                      const std::set<std::string>& wanted, const ir::Env& env);
// JIT-compiles the derivatives of p's `mod` (or reuses the code of an equal one compiled earlier in
// this process) and binds env (CpuBinding's rules), unless there is nothing to evaluate (a
// constant slope, no wanted load). Throws std::runtime_error when LLVM is unavailable.
std::unique_ptr<ModGradient> llvm_mod_gradient(const ir::Program& p, const std::optional<ir::Mod>& mod,
                                               const std::set<std::string>& wanted, const ir::Env& env);

}  // namespace flexjit::cpu

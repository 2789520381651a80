#pragma once
// The LLVM CPU back end: a program's mods JIT-compiled with ORC (LLJIT) to native functions that
// compute exactly what the interpreter computes (interpreter.hpp states the semantics; the
// property tests in tests/cpu check it bit for bit). No LLVM type appears here: the build may
// leave LLVM out (FLEXJIT_WITH_LLVM), or the module that holds the LLVM half may not load
// (llvm_loader.hpp); then llvm_backend_available() is false and the constructors throw, saying why.
//
// Compile once per program, bind per call:
//   CompiledMods mods(program);            // JIT, optimised at O2 (tens of ms)
//   CpuBinding bound(program, env);        // scalars and tensors (cpu_args.hpp)
//   bool keep = mods.mask(bound, b, h, q, kv);
// A missing mask_mod keeps every key, a missing score_mod returns score, a missing sink returns
// -inf (as eval_mask / eval_score / eval_sink). Every call may run concurrently from any thread.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/args.hpp"
#include "ir/differentiate.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu {

// Whether this build has the LLVM back end (FLEXJIT_HAVE_LLVM), its module loads and it can
// target the host. The first call opens the module (and so libLLVM).
bool llvm_backend_available();

// Why llvm_backend_available() is false (what is missing, what was tried); empty when it is true.
std::string llvm_backend_unavailable_reason();

class CompiledMods {
 public:
  // Throws std::runtime_error when LLVM is unavailable or code generation fails.
  explicit CompiledMods(const ir::Program& p);
  ~CompiledMods();
  CompiledMods(CompiledMods&&) noexcept;
  CompiledMods& operator=(CompiledMods&&) noexcept;

  bool has_mask() const;
  bool has_score() const;
  bool has_sink() const;

  // One position. Throw std::runtime_error when a load went out of range (CpuBinding::check).
  bool mask(const CpuBinding& a, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv) const;
  float score(const CpuBinding& a, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv, float s) const;
  float sink(const CpuBinding& a, std::int64_t b, std::int64_t h) const;

  // A row of keys kv0 .. kv0 + n - 1 in one call, the mod inlined into the loop (the attention's
  // hot path). keep[j] = mask(kv0 + j) as 0 / 1; s[j] = score(kv0 + j, s[j]) where keep[j] != 0,
  // s[j] untouched elsewhere. Out-of-range loads are recorded, not thrown: call a.check().
  void mask_row(const CpuBinding& a, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0, std::int64_t n,
                std::uint8_t* keep) const;
  void score_row(const CpuBinding& a, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0,
                 std::int64_t n, const std::uint8_t* keep, float* s) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The backward's derivatives of a mod (ir/differentiate.hpp: d_score and the loads' reached,
// indices and derivative) JIT-compiled as row functions, with the semantics and the rules of
// CompiledMods (bind with a CpuBinding of the program the mod belongs to; loads out of range are
// recorded, not thrown: call a.check()). cpu/mod_gradient.hpp is what the backward calls.
class CompiledGradient {
 public:
  // decls: the mod's program (its scalars and captures). slope: d mod / d score, or undefined
  // for no slope_row. Throws std::runtime_error when LLVM is unavailable or code generation fails.
  CompiledGradient(const ir::Program& decls, const ir::Expr& slope, const std::vector<ir::LoadDerivative>& loads);
  ~CompiledGradient();
  CompiledGradient(CompiledGradient&&) noexcept;
  CompiledGradient& operator=(CompiledGradient&&) noexcept;

  // Keys kv0 .. kv0 + n - 1 of query row q where keep[j] != 0, the mod having seen score x[j]
  // (other entries are neither evaluated nor written): slope[j] = d mod / d score.
  void slope_row(const CpuBinding& a, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0,
                 std::int64_t n, const std::uint8_t* keep, const float* x, float* slope) const;
  // The same for loads[i]: reached[j] = its condition as 0 / 1 and, where it holds,
  // indices[j * rank + d] and derivative[j].
  void load_row(std::size_t i, const CpuBinding& a, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0,
                std::int64_t n, const std::uint8_t* keep, const float* x, std::uint8_t* reached, std::int64_t* indices,
                float* derivative) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Expressions of any type JIT-compiled together (one module, one compile) over a program's
// declarations (its scalars and captures; its mods are ignored), each evaluated at given
// parameters. The unit the property tests compare with ir::evaluate().
class CompiledExprs {
 public:
  CompiledExprs(const ir::Program& decls, const std::vector<ir::Expr>& exprs);
  ~CompiledExprs();
  CompiledExprs(CompiledExprs&&) noexcept;
  CompiledExprs& operator=(CompiledExprs&&) noexcept;

  std::size_t size() const;
  // Expression i at env's b, h, q_idx, kv_idx and score (its scalars and tensors come from the
  // binding). Throws like CompiledMods::mask.
  ir::Value evaluate(std::size_t i, const CpuBinding& a, const ir::Env& params) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace flexjit::cpu

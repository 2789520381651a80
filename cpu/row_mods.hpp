#pragma once
// The mods as the CPU attention loop consumes them: one query row's keys at a time, bound to one
// set of scalars and tensors. Two implementations: the interpreter (the executable spec) and the
// LLVM native code; the attention loop does not know which it has.
#include <cstdint>
#include <memory>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu {

class RowMods {
 public:
  virtual ~RowMods() = default;
  // keep[j] = mask(b, h, q, kv0 + j) as 0 / 1, for j < n.
  virtual void mask_row(std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0, std::int64_t n,
                        std::uint8_t* keep) const = 0;
  // s[j] = score(b, h, q, kv0 + j, s[j]) where keep[j] != 0; other entries untouched.
  virtual void score_row(std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t kv0, std::int64_t n,
                         const std::uint8_t* keep, float* s) const = 0;
  virtual float sink(std::int64_t b, std::int64_t h) const = 0;
  // Throws std::runtime_error for an error the rows recorded instead of throwing (a load out of
  // range in native code). The interpreter throws at once and never has anything to report.
  virtual void check() const {}

  bool has_score = false;  // false: score_row is the identity, skip it
  bool has_sink = false;   // false: sink is -inf
};

// Throws what ir::evaluate throws, when a row evaluates it.
std::unique_ptr<RowMods> interpreter_row_mods(const ir::Program& p, const ir::Env& env);
// JIT-compiles p (or reuses the code of an equal program compiled earlier in this process) and
// binds env (CpuBinding's rules). Throws std::runtime_error when LLVM is unavailable.
std::unique_ptr<RowMods> llvm_row_mods(const ir::Program& p, const ir::Env& env);

}  // namespace flexjit::cpu

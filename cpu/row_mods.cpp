#include "cpu/row_mods.hpp"

#include <deque>
#include <mutex>

#include "cpu/args.hpp"
#include "cpu/llvm_backend.hpp"

namespace flexjit::cpu {

namespace {

using i64 = std::int64_t;

class InterpreterRows final : public RowMods {
 public:
  InterpreterRows(const ir::Program& p, const ir::Env& env) : p_(p), env_(env) {
    has_score = p.score_mod.has_value();
    has_sink = p.sink.has_value();
  }
  void mask_row(i64 b, i64 h, i64 q, i64 kv0, i64 n, std::uint8_t* keep) const override {
    for (i64 j = 0; j < n; ++j) keep[j] = ir::eval_mask(p_, env_, b, h, q, kv0 + j) ? 1 : 0;
  }
  void score_row(i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep, float* s) const override {
    for (i64 j = 0; j < n; ++j)
      if (keep[j]) s[j] = ir::eval_score(p_, env_, b, h, q, kv0 + j, s[j]);
  }
  float sink(i64 b, i64 h) const override { return ir::eval_sink(p_, env_, b, h); }

 private:
  const ir::Program& p_;
  const ir::Env& env_;
};

class NativeRows final : public RowMods {
 public:
  NativeRows(std::shared_ptr<const CompiledMods> mods, const ir::Program& p, const ir::Env& env)
      : mods_(std::move(mods)), bound_(p, env) {
    has_score = mods_->has_score();
    has_sink = mods_->has_sink();
  }
  void mask_row(i64 b, i64 h, i64 q, i64 kv0, i64 n, std::uint8_t* keep) const override {
    mods_->mask_row(bound_, b, h, q, kv0, n, keep);
  }
  void score_row(i64 b, i64 h, i64 q, i64 kv0, i64 n, const std::uint8_t* keep, float* s) const override {
    mods_->score_row(bound_, b, h, q, kv0, n, keep, s);
  }
  float sink(i64 b, i64 h) const override { return mods_->sink(bound_, b, h); }
  void check() const override { bound_.check(); }

 private:
  std::shared_ptr<const CompiledMods> mods_;
  CpuBinding bound_;
};

// ---------------------------------------------------------------------------------------------
// A few recently compiled programs, so repeated runs of one program (test sweeps, benchmarks)
// pay the JIT once. Equality is structural: declarations in order and mod bodies.

bool same_mod(const std::optional<ir::Mod>& a, const std::optional<ir::Mod>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || ir::equal(a->body, b->body);
}

bool same_program(const ir::Program& a, const ir::Program& b) {
  if (a.captures.size() != b.captures.size() || a.scalars.size() != b.scalars.size()) return false;
  for (std::size_t k = 0; k < a.captures.size(); ++k)
    if (a.captures[k].name != b.captures[k].name || a.captures[k].dtype != b.captures[k].dtype ||
        a.captures[k].rank != b.captures[k].rank)
      return false;
  for (std::size_t k = 0; k < a.scalars.size(); ++k)
    if (a.scalars[k].name != b.scalars[k].name || a.scalars[k].type != b.scalars[k].type) return false;
  return same_mod(a.mask_mod, b.mask_mod) && same_mod(a.score_mod, b.score_mod) && same_mod(a.sink, b.sink);
}

std::shared_ptr<const CompiledMods> compiled(const ir::Program& p) {
  struct Entry {
    ir::Program program;
    std::shared_ptr<const CompiledMods> mods;
  };
  constexpr std::size_t kCapacity = 32;
  static std::mutex mu;
  static std::deque<Entry> cache;  // most recent first
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = cache.begin(); it != cache.end(); ++it)
      if (same_program(it->program, p)) {
        Entry e = *it;
        cache.erase(it);
        cache.push_front(e);
        return e.mods;
      }
  }
  auto mods = std::make_shared<const CompiledMods>(p);  // outside the lock: compiles may overlap
  std::lock_guard<std::mutex> lock(mu);
  cache.push_front({p, mods});
  if (cache.size() > kCapacity) cache.pop_back();
  return mods;
}

}  // namespace

std::unique_ptr<RowMods> interpreter_row_mods(const ir::Program& p, const ir::Env& env) {
  return std::make_unique<InterpreterRows>(p, env);
}

std::unique_ptr<RowMods> llvm_row_mods(const ir::Program& p, const ir::Env& env) {
  return std::make_unique<NativeRows>(compiled(p), p, env);
}

}  // namespace flexjit::cpu

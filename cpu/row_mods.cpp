#include "cpu/row_mods.hpp"

#include "cpu/args.hpp"
#include "cpu/compile_cache.hpp"
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

// Compiled once per program and kept (compile_cache.hpp).
std::shared_ptr<const CompiledMods> compiled(const ir::Program& p) {
  static CompileCache<ir::Program, CompiledMods> cache;
  return cache.get(
      p,
      [](const ir::Program& a, const ir::Program& b) {
        return same_declarations(a, b) && same_mod(a.mask_mod, b.mask_mod) && same_mod(a.score_mod, b.score_mod) &&
               same_mod(a.sink, b.sink);
      },
      [&] { return std::make_shared<const CompiledMods>(p); });
}

}  // namespace

std::unique_ptr<RowMods> interpreter_row_mods(const ir::Program& p, const ir::Env& env) {
  return std::make_unique<InterpreterRows>(p, env);
}

std::unique_ptr<RowMods> llvm_row_mods(const ir::Program& p, const ir::Env& env) {
  return std::make_unique<NativeRows>(compiled(p), p, env);
}

}  // namespace flexjit::cpu

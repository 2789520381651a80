#include "tests/analysis/kv_range_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"

namespace flexjit::analysis_test {

std::string show(const compiler::KvRange& r) { return "[" + ir::to_string(r.lo) + ", " + ir::to_string(r.hi) + ")"; }

void tame_scalars(World& w, std::mt19937_64& rng) {
  for (auto& [name, v] : w.env.scalars) {
    if (v.type != ir::Type::Int) continue;
    const std::int64_t x = uniform(rng, 0, 5) == 0 ? uniform(rng, -(1LL << 40), 1LL << 40) : uniform(rng, -50, 350);
    v = ir::Value::integer(x);
    w.scalars[name] = x;
  }
}

void check_program(const ir::Program& p, std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t,
                   std::int64_t* skipped, ScalarChoice choose) {
  const compiler::KvRange r = compiler::kv_range(p);
  for (int i = 0; i < worlds; ++i) {
    World w = random_world(p, rng, max_t);
    choose(w, rng);
    for (int j = 0; j < tiles; ++j) {
      const std::int64_t q_lo = uniform(rng, 0, w.Tq - 1);
      const std::int64_t q_hi = std::min(w.Tq - 1, q_lo + uniform(rng, 0, 1) * uniform(rng, 0, 130));
      const std::int64_t b = uniform(rng, 0, w.B - 1), h = uniform(rng, 0, w.H - 1);
      const auto [lo, hi] = eval_kv_range(r, w, b, h, q_lo, q_hi);
      ASSERT_TRUE(0 <= lo && lo <= w.Tkv && 0 <= hi && hi <= w.Tkv)
          << p.name << ": " << show(r) << " = [" << lo << ", " << hi << ") outside [0, " << w.Tkv << "]";
      for (std::int64_t qi = q_lo; qi <= q_hi; ++qi)
        for (std::int64_t ki = 0; ki < w.Tkv; ++ki) {
          if (ki >= lo && ki < hi) continue;
          ASSERT_FALSE(ir::eval_mask(p, w.env, b, h, qi, ki))
              << p.name << ": kv range " << show(r) << " = [" << lo << ", " << hi << ") for q in [" << q_lo << ", "
              << q_hi << "] (Tkv " << w.Tkv << ") excludes kv " << ki << " but mask(" << qi << ", " << ki
              << ") is true\n"
              << ir::to_string(p.mask_mod->body);
        }
      if (skipped) *skipped += w.Tkv - std::max<std::int64_t>(0, hi - lo);
    }
  }
}

}  // namespace flexjit::analysis_test

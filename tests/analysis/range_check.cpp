#include "tests/analysis/range_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"

namespace flexjit::analysis_test {

std::string show(const compiler::IndexRange& r) { return "[" + ir::to_string(r.lo) + ", " + ir::to_string(r.hi) + ")"; }

void tame_scalars(World& w, std::mt19937_64& rng) {
  for (auto& [name, v] : w.env.scalars) {
    if (v.type != ir::Type::Int) continue;
    const std::int64_t x = uniform(rng, 0, 5) == 0 ? uniform(rng, -(1LL << 40), 1LL << 40) : uniform(rng, -50, 350);
    v = ir::Value::integer(x);
    w.scalars[name] = x;
  }
}

void scalars_near_2_24(World& w, std::mt19937_64& rng) {
  for (auto& [name, v] : w.env.scalars) {
    if (v.type != ir::Type::Int) continue;
    std::int64_t x = uniform(rng, -50, 350);
    switch (uniform(rng, 0, 3)) {
      case 0: x = (std::int64_t{1} << 24) + uniform(rng, -120, 120); break;
      case 1: x = -(std::int64_t{1} << 24) + uniform(rng, -120, 120); break;
      case 2: x = (std::int64_t{1} << uniform(rng, 20, 40)) + uniform(rng, -3, 3); break;
      default: break;
    }
    v = ir::Value::integer(x);
    w.scalars[name] = x;
  }
}

void check_range(const ir::Program& p, const compiler::IndexRange& r, const compiler::RangeAxes& axes,
                 std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t, std::int64_t* skipped,
                 ScalarChoice choose) {
  const bool keys = solves_for_keys(axes);
  const char* unknown = keys ? "kv" : "q";
  const char* tile = keys ? "q" : "kv";
  for (int i = 0; i < worlds; ++i) {
    World w = random_world(p, rng, max_t);
    choose(w, rng);
    const std::int64_t extent = unknown_extent(axes, w), tile_end = tile_extent(axes, w);
    for (int j = 0; j < tiles; ++j) {
      const std::int64_t t_lo = uniform(rng, 0, tile_end - 1);
      const std::int64_t t_hi = std::min(tile_end - 1, t_lo + uniform(rng, 0, 1) * uniform(rng, 0, 130));
      const std::int64_t b = uniform(rng, 0, w.B - 1), h = uniform(rng, 0, w.H - 1);
      const auto [lo, hi] = eval_range(r, axes, w, b, h, t_lo, t_hi);
      ASSERT_TRUE(0 <= lo && lo <= extent && 0 <= hi && hi <= extent)
          << p.name << ": " << show(r) << " = [" << lo << ", " << hi << ") outside [0, " << extent << "]";
      for (std::int64_t ti = t_lo; ti <= t_hi; ++ti)
        for (std::int64_t ui = 0; ui < extent; ++ui) {
          if (ui >= lo && ui < hi) continue;
          const std::int64_t qi = keys ? ti : ui, ki = keys ? ui : ti;
          ASSERT_FALSE(ir::eval_mask(p, w.env, b, h, qi, ki))
              << p.name << ": " << unknown << " range " << show(r) << " = [" << lo << ", " << hi << ") for " << tile
              << " in [" << t_lo << ", " << t_hi << "] (" << axes.extent << " " << extent << ") excludes " << unknown
              << " " << ui << " but mask(" << qi << ", " << ki << ") is true\n"
              << ir::to_string(p.mask_mod->body);
        }
      if (skipped) *skipped += extent - std::max<std::int64_t>(0, hi - lo);
    }
  }
}

void check_program(const ir::Program& p, std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t,
                   std::int64_t* skipped, ScalarChoice choose) {
  check_range(p, compiler::kv_range(p), compiler::kKvRangeAxes, rng, worlds, tiles, max_t, skipped, choose);
}

void check_q_program(const ir::Program& p, std::mt19937_64& rng, int worlds, int tiles, std::int64_t max_t,
                     std::int64_t* skipped, ScalarChoice choose) {
  check_range(p, compiler::q_range(p), compiler::kQRangeAxes, rng, worlds, tiles, max_t, skipped, choose);
}

}  // namespace flexjit::analysis_test

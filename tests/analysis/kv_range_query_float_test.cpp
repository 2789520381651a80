// Float bounds that depend on the query (`kv_idx < q_idx * 0.5 + 3.0`, `kv_idx > q_idx - w` with
// a float scalar w): sound against brute force, NaN, inf, overflow and rounding included, and as
// tight as the keys the mask keeps where the bound is finite and below 2^24.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "compiler/tile_ranges.hpp"
#include "ir/interpreter.hpp"
#include "tests/analysis/range_check.hpp"
#include "tests/analysis/random_expr.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using compiler::kv_range;
using compiler::kv_range_is_full;
using compiler::KvRange;
using P = std::pair<std::int64_t, std::int64_t>;

Expr to_float(Expr e) { return ir::Cast::make(ir::Type::Float, e); }
Expr flt(float v) { return ir::FloatImm::make(v); }
Expr fbin(ir::BinaryOp op, Expr a, Expr b) { return ir::Binary::make(op, a, b); }
Expr xv() { return ir::Var::make("x", ir::Type::Float, ir::VarKind::Scalar); }

// The float scalar x at the values that break naive reasoning, the int scalar s tame.
void special_floats(World& w, std::mt19937_64& rng) {
  tame_scalars(w, rng);
  const float specials[] = {NAN, INFINITY, -INFINITY, 3e38f, -3e38f, 16777216.0f, 16777215.0f, -16777217.0f,
                            0.0f, -0.0f, 0.5f, 2.5f, 7.0f, -3.25f, 1e-30f};
  const float x = uniform(rng, 0, 2) == 0 ? static_cast<float>(uniform(rng, -4000, 4000)) / 16.0f
                                          : specials[uniform(rng, 0, std::size(specials) - 1)];
  if (w.env.scalars.count("x")) {
    w.env.scalars["x"] = ir::Value::real(x);
    w.scalars["x"] = static_cast<double>(x);
  }
}

TEST(KvRangeQueryFloat, RandomQueryFloatBoundsContainEveryTrueKey) {
  std::mt19937_64 rng(test_seed(31));
  const ir::CompareOp ops[] = {ir::CompareOp::LT, ir::CompareOp::LE, ir::CompareOp::GT,
                               ir::CompareOp::GE, ir::CompareOp::EQ, ir::CompareOp::NE};
  const float factors[] = {0.5f, -0.5f, 0.25f, 3.0f, -1.0f, 1e-3f, 3e38f, 0.0f, INFINITY, NAN, 0.1f};
  const Expr s = int_scalar("s");
  int bounded = 0;
  for (int i = 0; i < 800; ++i) {
    auto factor = [&] { return flt(factors[uniform(rng, 0, std::size(factors) - 1)]); };
    // A float of the query: mostly monotone shapes, sometimes one that is not (q * q, q * x, min).
    std::function<Expr(int)> qfloat = [&](int depth) -> Expr {
      if (depth == 0 || uniform(rng, 0, 3) == 0) {
        switch (uniform(rng, 0, 6)) {
          case 0: return to_float(q() + c(uniform(rng, -20, 20)));
          case 1: return to_float(fdiv(q(), c(uniform(rng, 1, 5))));
          case 2: return to_float(q() - s);
          case 3: return xv();
          case 4: return flt(static_cast<float>(uniform(rng, -80, 80)) / 4.0f);
          case 5: return load("tf", ir::DType::Float32, {bv()});
          default: return to_float(q());
        }
      }
      switch (uniform(rng, 0, 8)) {
        case 0:
        case 1: return fbin(ir::BinaryOp::Add, qfloat(depth - 1), qfloat(depth - 1));
        case 2: return fbin(ir::BinaryOp::Sub, qfloat(depth - 1), qfloat(depth - 1));
        case 3:
        case 4: return uniform(rng, 0, 1) ? fbin(ir::BinaryOp::Mul, qfloat(depth - 1), factor())
                                          : fbin(ir::BinaryOp::Mul, factor(), qfloat(depth - 1));
        case 5: return fbin(ir::BinaryOp::Div, qfloat(depth - 1), factor());
        case 6: return ir::Unary::make(ir::UnaryOp::Neg, qfloat(depth - 1));
        case 7: return fbin(ir::BinaryOp::Mul, qfloat(depth - 1), qfloat(depth - 1));
        default: return fbin(uniform(rng, 0, 1) ? ir::BinaryOp::Min : ir::BinaryOp::Max, qfloat(depth - 1), qfloat(depth - 1));
      }
    };
    auto kv_int = [&]() -> Expr {
      switch (uniform(rng, 0, 4)) {
        case 0: return kv() + s;
        case 1: return q() - kv();
        case 2: return ir::Call::make(ir::Intrinsic::Abs, {q() - kv()});
        case 3: return c(0) - kv();
        default: return kv();
      }
    };
    auto atom = [&]() -> Expr {
      switch (uniform(rng, 0, 5)) {
        case 0: return cmp(ops[uniform(rng, 0, 5)], kv(), q() + c(uniform(rng, -20, 20)));
        case 1: return cmp(ops[uniform(rng, 0, 5)], to_float(q()), qfloat(2));  // query-only
        default: {
          Expr a = to_float(kv_int()), b = qfloat(3);
          if (uniform(rng, 0, 1)) std::swap(a, b);
          return cmp(ops[uniform(rng, 0, 5)], a, b);
        }
      }
    };
    Expr m = atom();
    for (int k = uniform(rng, 0, 2); k > 0; --k) {
      switch (uniform(rng, 0, 4)) {
        case 0:
        case 1: m = m && atom(); break;
        case 2: m = m || atom(); break;
        case 3: m = !m; break;
        default: m = ir::Select::make(atom(), m, atom()); break;
      }
    }
    const ir::Program p = mask_program("query_float", m, ExprGen::scalars(), ExprGen::captures());
    bounded += !kv_range_is_full(kv_range(p));
    check_program(p, rng, 3, 8, 120, nullptr, special_floats);
    ASSERT_FALSE(HasFailure());
  }
  EXPECT_GT(bounded, 250);  // the new bounds are taken, not only skipped
}

// Overflow to inf inside the bound, and the NaN of inf - inf in the middle of a tile whose ends
// are -inf and +inf: the guard on the ends gives every key.
TEST(KvRangeQueryFloat, InfiniteInsideTheTileGivesEveryKey) {
  const Expr up = fbin(ir::BinaryOp::Mul, to_float(q()), flt(3e38f));
  const Expr down = fbin(ir::BinaryOp::Mul, to_float(q() - c(10)), flt(3e38f));
  const Expr nan_inside = cmp(ir::CompareOp::LT, to_float(kv()), fbin(ir::BinaryOp::Add, up, down));
  const ir::Program p = mask_program("nan_inside", !nan_inside);
  World w;
  w.Tq = w.Tkv = 20;
  EXPECT_EQ(eval_kv_range(kv_range(p), w, 0, 0, 0, 10), P(0, 20));
  std::mt19937_64 rng(test_seed(32));
  check_program(p, rng, 5, 20, 40);
}

// The keys the mask keeps over the tile, as a hull [min, max + 1) (lo >= hi: none).
P kept_hull(const ir::Program& p, const World& w, std::int64_t q_lo, std::int64_t q_hi) {
  std::int64_t lo = w.Tkv, hi = 0;
  for (std::int64_t qi = q_lo; qi <= q_hi; ++qi)
    for (std::int64_t ki = 0; ki < w.Tkv; ++ki)
      if (ir::eval_mask(p, w.env, 0, 0, qi, ki)) {
        lo = std::min(lo, ki);
        hi = std::max(hi, ki + 1);
      }
  return {lo, hi};
}

World world_with_x(float x) {
  World w;
  w.Tq = 400;
  w.Tkv = 600;
  w.env.scalars["x"] = ir::Value::real(x);
  return w;
}

TEST(KvRangeQueryFloat, MonotoneBoundsAreTheKeptKeys) {
  const ir::Scalar x{"x", ir::Type::Float, {}};
  const Expr half_q = fbin(ir::BinaryOp::Mul, to_float(q()), flt(0.5f));
  const std::vector<std::pair<std::string, Expr>> masks = {
      // kv_idx < q_idx * 0.5 + 3.0: keys up to ceil(q_hi / 2 + 3).
      {"growing prefix", cmp(ir::CompareOp::LT, to_float(kv()), fbin(ir::BinaryOp::Add, half_q, flt(3.0f)))},
      // q_idx * 0.5 >= kv_idx: keys up to floor(q_hi / 2).
      {"half causal", cmp(ir::CompareOp::GE, half_q, to_float(kv()))},
      // kv_idx <= q_idx and kv_idx > q_idx - x: a window of float width.
      {"float width window",
       (kv() <= q()) && cmp(ir::CompareOp::GT, to_float(kv()), fbin(ir::BinaryOp::Sub, to_float(q()), xv()))},
      // A bound that decreases with the query: kv_idx < 300 - q_idx / 4.
      {"shrinking",
       cmp(ir::CompareOp::LT, to_float(kv()), fbin(ir::BinaryOp::Sub, flt(300.0f), fbin(ir::BinaryOp::Div, to_float(q()), flt(4.0f))))},
      // Both ends from floats: (q - 10) / 2 <= kv <= q * 0.75.
      {"float band",
       cmp(ir::CompareOp::LE, fbin(ir::BinaryOp::Div, to_float(q() - c(10)), flt(2.0f)), to_float(kv())) &&
           cmp(ir::CompareOp::LE, to_float(kv()), fbin(ir::BinaryOp::Mul, to_float(q()), flt(0.75f)))},
  };
  for (const auto& [name, m] : masks) {
    const ir::Program p = mask_program(name, m, {x});
    const KvRange r = kv_range(p);
    ASSERT_FALSE(kv_range_is_full(r)) << name;
    for (float xval : {0.25f, 2.5f, 7.0f, 64.0f})
      for (std::int64_t q_lo : {0, 1, 37, 64, 199})
        for (std::int64_t len : {1, 2, 64}) {
          const World w = world_with_x(xval);
          const std::int64_t q_hi = q_lo + len - 1;
          const P want = kept_hull(p, w, q_lo, q_hi), got = eval_kv_range(r, w, 0, 0, q_lo, q_hi);
          if (want.first >= want.second) {
            EXPECT_GE(got.first, got.second) << name << " x " << xval << " q [" << q_lo << ", " << q_hi << "]";
            continue;
          }
          EXPECT_EQ(got, want) << name << " " << show(r) << " x " << xval << " q [" << q_lo << ", " << q_hi << "]";
        }
  }
}

// Where the float width is NaN, infinite or 2^24 and more, the causal half alone bounds the keys.
TEST(KvRangeQueryFloat, UnboundedWidthsFallBackToTheIntegerSide) {
  const ir::Scalar x{"x", ir::Type::Float, {}};
  const ir::Program p = mask_program(
      "float width window", (kv() <= q()) && cmp(ir::CompareOp::GT, to_float(kv()), fbin(ir::BinaryOp::Sub, to_float(q()), xv())),
      {x});
  const KvRange r = kv_range(p);
  for (float big : {NAN, INFINITY, -INFINITY, 16777216.0f, 3e9f})
    EXPECT_EQ(eval_kv_range(r, world_with_x(big), 0, 0, 100, 163), P(0, 164)) << big;
  EXPECT_EQ(eval_kv_range(r, world_with_x(10.0f), 0, 0, 100, 163), P(91, 164));
}

// Shapes that are not monotone in the query bound nothing.
TEST(KvRangeQueryFloat, NonMonotoneBoundsGiveEveryKey) {
  const ir::Scalar x{"x", ir::Type::Float, {}};
  const Expr fq = to_float(q());
  for (const Expr& bound : {fbin(ir::BinaryOp::Mul, fq, fq), fbin(ir::BinaryOp::Mul, fq, xv()),
                            fbin(ir::BinaryOp::Max, fq, flt(3.0f)), fbin(ir::BinaryOp::Mul, fq, flt(0.0f)),
                            fbin(ir::BinaryOp::Div, flt(100.0f), fq)})
    EXPECT_TRUE(kv_range_is_full(kv_range(mask_program("not_monotone", cmp(ir::CompareOp::LT, to_float(kv()), bound), {x}))));
}

}  // namespace
}  // namespace flexjit::analysis_test

// kv_range against brute force: for every query of a tile, every key whose mask is true lies in
// [lo, hi), and both ends lie in [0, Tkv]. Then the exact ranges expected for the common masks.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "compiler/tile_ranges.hpp"
#include "tests/analysis/range_check.hpp"
#include "tests/analysis/random_expr.hpp"
#include "tests/analysis/random_range_mask.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using compiler::kv_range;
using compiler::kv_range_is_full;
using compiler::KvRange;

TEST(KvRange, HandProgramsContainEveryTrueKey) {
  std::mt19937_64 rng(test_seed(11));
  for (const auto& np : hand_programs()) {
    SCOPED_TRACE(np.name + " " + show(kv_range(np.program)));
    check_program(np.program, rng, 30, 20, 300);
    ASSERT_FALSE(HasFailure());
  }
}

TEST(KvRange, ExamplesContainEveryTrueKey) {
  if (!have_pipeline()) GTEST_SKIP() << "front end (compiler/pipeline) not built";
  std::mt19937_64 rng(test_seed(12));
  for (const auto& np : example_programs()) {
    SCOPED_TRACE(np.name + " " + show(kv_range(np.program)));
    check_program(np.program, rng, 30, 20, 300);
    ASSERT_FALSE(HasFailure());
  }
}

TEST(KvRange, RandomMasksContainEveryTrueKey) {
  std::mt19937_64 rng(test_seed(13));
  std::int64_t skipped = 0;
  int bounded = 0;
  for (int i = 0; i < 600; ++i) {
    ExprGen gen(rng, /*tame=*/true);
    const ir::Program p =
        mask_program("random", gen.bool_expr(static_cast<int>(uniform(rng, 1, 4))), ExprGen::scalars(), ExprGen::captures());
    bounded += !kv_range_is_full(kv_range(p));
    check_program(p, rng, 2, 6, 80, &skipped);
    ASSERT_FALSE(HasFailure());
  }
  EXPECT_GT(bounded, 30);
  EXPECT_GT(skipped, 0);
}

// A mask built around a solvable atom, to hit the solver's branches often.
TEST(KvRange, RandomAtomsContainEveryTrueKey) {
  std::mt19937_64 rng(test_seed(14));
  for (int i = 0; i < 400; ++i) {
    const Expr m = random_atom_mask(rng);
    const ir::Program p = mask_program("atoms", m, ExprGen::scalars(), ExprGen::captures());
    check_program(p, rng, 2, 8, 80);
    ASSERT_FALSE(HasFailure());
  }
}

// Ints converted to float and compared with float constants or other converted Ints, around
// 2^24 where the conversion starts to round, and terms that read only the query (or b, h and
// scalars): every key the mask keeps stays in the range.
TEST(KvRange, RandomFloatAndQueryTermsContainEveryTrueKey) {
  std::mt19937_64 rng(test_seed(15));
  int bounded = 0;
  for (int i = 0; i < 600; ++i) {
    const Expr m = random_float_and_query_mask(rng);
    const ir::Program p = mask_program("float_and_query", m, ExprGen::scalars(), ExprGen::captures());
    bounded += !kv_range_is_full(kv_range(p));
    check_program(p, rng, 3, 8, 90, nullptr, uniform(rng, 0, 1) ? scalars_near_2_24 : tame_scalars);
    ASSERT_FALSE(HasFailure());
  }
  EXPECT_GT(bounded, 200);
}

// ---- Precision.

const ir::Program& hand(const std::string& name) {
  static const std::vector<NamedProgram> programs = hand_programs();
  for (const auto& np : programs)
    if (np.name == name) return np.program;
  throw std::runtime_error("no hand program " + name);
}

std::pair<std::int64_t, std::int64_t> at(const KvRange& r, std::int64_t q_lo, std::int64_t q_hi, std::int64_t Tkv,
                                         std::map<std::string, ir::Value> scalars = {}) {
  World w;
  w.Tkv = Tkv;
  w.env.scalars = std::move(scalars);
  return eval_kv_range(r, w, 0, 0, q_lo, q_hi);
}

TEST(KvRange, CausalIsPrefix) {
  const KvRange r = kv_range(hand("causal"));
  EXPECT_FALSE(kv_range_is_full(r));
  EXPECT_EQ(ir::to_string(r.lo), "0");
  for (std::int64_t q_lo : {0, 5, 64, 1000})
    for (std::int64_t len : {1, 3, 64})
      for (std::int64_t Tkv : {1, 70, 2000}) {
        const std::int64_t q_hi = q_lo + len - 1;
        EXPECT_EQ(at(r, q_lo, q_hi, Tkv), std::make_pair(std::int64_t{0}, std::min(q_hi + 1, Tkv)))
            << show(r) << " q [" << q_lo << ", " << q_hi << "] Tkv " << Tkv;
      }
  // ALiBi's score mod changes nothing; document masks keep their causal half.
  EXPECT_EQ(at(kv_range(hand("alibi_causal")), 10, 20, 100), std::make_pair(std::int64_t{0}, std::int64_t{21}));
  EXPECT_EQ(at(kv_range(hand("document")), 10, 20, 100), std::make_pair(std::int64_t{0}, std::int64_t{21}));
  EXPECT_EQ(at(kv_range(hand("dilated")), 10, 20, 100, {{"dilation", ir::Value::integer(3)}}),
            std::make_pair(std::int64_t{0}, std::int64_t{21}));
  EXPECT_EQ(at(kv_range(hand("causal_offset")), 10, 20, 1000, {{"offset", ir::Value::integer(100)}}),
            std::make_pair(std::int64_t{0}, std::int64_t{121}));
}

TEST(KvRange, WindowIsBand) {
  for (const char* name : {"sliding_window", "window_chained_let"}) {
    const KvRange r = kv_range(hand(name));
    for (std::int64_t w : {1, 16, 100, 5000})
      for (std::int64_t q_lo : {0, 64, 1000})
        for (std::int64_t Tkv : {50, 1100, 9000}) {
          const std::int64_t q_hi = q_lo + 63;
          const auto want = std::make_pair(std::clamp<std::int64_t>(q_lo - w + 1, 0, Tkv), std::min(q_hi + 1, Tkv));
          EXPECT_EQ(at(r, q_lo, q_hi, Tkv, {{"window", ir::Value::integer(w)}}), want)
              << name << " " << show(r) << " w " << w << " q_lo " << q_lo << " Tkv " << Tkv;
        }
  }
  // not (kv > q or kv < q - w): kv in [q - w, q]
  EXPECT_EQ(at(kv_range(hand("negated_window")), 100, 163, 1000, {{"window", ir::Value::integer(10)}}),
            std::make_pair(std::int64_t{90}, std::int64_t{164}));
}

TEST(KvRange, SinkWindowIsHull) {
  const KvRange r = kv_range(hand("sink_window"));
  EXPECT_EQ(at(r, 1000, 1063, 5000, {{"window", ir::Value::integer(128)}}),
            std::make_pair(std::int64_t{0}, std::int64_t{1064}));
  EXPECT_EQ(ir::to_string(r.lo), "0");
}

TEST(KvRange, ChunkedStartsAtTheChunk) {
  const KvRange r = kv_range(hand("chunked"));  // chunk 64, causal
  EXPECT_EQ(at(r, 130, 139, 1000), std::make_pair(std::int64_t{128}, std::int64_t{140}));
  EXPECT_EQ(at(r, 64, 191, 1000), std::make_pair(std::int64_t{64}, std::int64_t{192}));
}

TEST(KvRange, NeighbourhoodSpansTheRowsInReach) {
  // abs(q // 64 - kv // 64) <= 7 and abs(q % 64 - kv % 64) <= 7: keys within 7 image rows.
  auto iabs = [](Expr x) { return ir::Call::make(ir::Intrinsic::Abs, {x}); };
  const Expr rows = iabs(fdiv(q(), c(64)) - fdiv(kv(), c(64))) <= c(7);
  const Expr cols = iabs(mod(q(), c(64)) - mod(kv(), c(64))) <= c(7);
  const KvRange r = kv_range(mask_program("neighbourhood", rows && cols));
  EXPECT_FALSE(kv_range_is_full(r));
  // Queries in image rows 20..21: keys in rows 13..28.
  EXPECT_EQ(at(r, 20 * 64, 22 * 64 - 1, 100 * 64), std::make_pair(std::int64_t{13 * 64}, std::int64_t{29 * 64}));
  EXPECT_EQ(at(r, 0, 127, 100 * 64), std::make_pair(std::int64_t{0}, std::int64_t{9 * 64}));
}

TEST(KvRange, UnboundedMasksAreFull) {
  EXPECT_TRUE(kv_range_is_full(kv_range(ir::Program{})));  // no mask_mod
  // A user scalar named like a range variable stays the user's: the variable kinds differ.
  ir::Program clash = mask_program("clash", kv() < int_scalar("Tkv"), {{"Tkv", ir::Type::Int, {}}});
  const KvRange user = kv_range(clash);
  EXPECT_FALSE(kv_range_is_full(user));
  EXPECT_EQ(at(user, 0, 10, 100, {{"Tkv", ir::Value::integer(50)}}), std::make_pair(std::int64_t{0}, std::int64_t{50}));
  // A mask that is never true gives an empty range.
  const KvRange none = kv_range(mask_program("never", (kv() < c(4)) && (kv() > c(10))));
  const auto [lo, hi] = at(none, 0, 10, 100);
  EXPECT_GE(lo, hi);
}

TEST(KvRange, QueryTermsDecidePerTile) {
  // is_causal ? causal : every key, decided per call.
  const KvRange opt = kv_range(hand("optional_causal"));
  EXPECT_EQ(at(opt, 10, 20, 100, {{"is_causal", ir::Value::boolean(true)}}), std::make_pair(std::int64_t{0}, std::int64_t{21}));
  EXPECT_EQ(at(opt, 10, 20, 100, {{"is_causal", ir::Value::boolean(false)}}), std::make_pair(std::int64_t{0}, std::int64_t{100}));
  // (q < 5) | (q >= kv): every key for the tiles holding rows 0..4, causal after them.
  const KvRange pre = kv_range(mask_program("query_prefix", (q() < c(5)) | (q() >= kv())));
  EXPECT_FALSE(kv_range_is_full(pre));
  EXPECT_EQ(at(pre, 0, 63, 1000), std::make_pair(std::int64_t{0}, std::int64_t{1000}));
  EXPECT_EQ(at(pre, 4, 67, 1000), std::make_pair(std::int64_t{0}, std::int64_t{1000}));
  EXPECT_EQ(at(pre, 5, 68, 1000), std::make_pair(std::int64_t{0}, std::int64_t{69}));
  EXPECT_EQ(at(pre, 64, 127, 1000), std::make_pair(std::int64_t{0}, std::int64_t{128}));
  // A query-only conjunct empties the tiles where it is false: rows from s on see a window.
  const ir::Scalar s{"s", ir::Type::Int, {}};
  const KvRange late = kv_range(mask_program("late_rows", (q() >= int_scalar("s")) & (kv() <= q()) & (q() - kv() < c(8)), {s}));
  const auto [lo, hi] = at(late, 0, 63, 1000, {{"s", ir::Value::integer(64)}});
  EXPECT_GE(lo, hi);
  EXPECT_EQ(at(late, 0, 63, 1000, {{"s", ir::Value::integer(63)}}), std::make_pair(std::int64_t{0}, std::int64_t{64}));
  EXPECT_EQ(at(late, 100, 163, 1000, {{"s", ir::Value::integer(63)}}), std::make_pair(std::int64_t{93}, std::int64_t{164}));
  // Per-head choice: heads below 2 are causal, the others see every key.
  const KvRange head = kv_range(mask_program("per_head", (hv() >= c(2)) || (kv() <= q())));
  World w;
  w.Tkv = 500;
  EXPECT_EQ(eval_kv_range(head, w, 0, 1, 10, 20), std::make_pair(std::int64_t{0}, std::int64_t{21}));
  EXPECT_EQ(eval_kv_range(head, w, 0, 2, 10, 20), std::make_pair(std::int64_t{0}, std::int64_t{500}));
  // A query term that reads a tensor cannot be decided per tile: every key.
  const ir::Capture t{"ti", ir::DType::Int32, 1, {}};
  EXPECT_TRUE(kv_range_is_full(
      kv_range(mask_program("tensor_term", (load("ti", ir::DType::Int32, {q()}) > c(0)) | (kv() <= q()), {}, {t}))));
}

TEST(KvRange, FloatBoundsAreExact) {
  auto to_float = [](Expr e) { return ir::Cast::make(ir::Type::Float, e); };
  auto flt = [](float v) { return ir::FloatImm::make(v); };
  // q - kv < 28.0 and q - kv <= 27.5 are q - kv < 28.
  for (Expr bound : {cmp(ir::CompareOp::LT, to_float(q() - kv()), flt(28.0f)),
                     cmp(ir::CompareOp::LE, to_float(q() - kv()), flt(27.5f)),
                     cmp(ir::CompareOp::GT, flt(27.01f), to_float(q() - kv()))}) {
    const KvRange r = kv_range(mask_program("float_window", (q() >= kv()) & bound));
    EXPECT_EQ(at(r, 100, 163, 1000), std::make_pair(std::int64_t{73}, std::int64_t{164})) << show(r);
  }
  // Beyond 2^24 the conversion rounds: float(kv + 2^24 - 10) <= 2^24 holds up to kv = 11
  // (16777217 converts to 16777216), so the range ends at 12, not 11.
  const Expr near = to_float(kv() + c((std::int64_t{1} << 24) - 10));
  const KvRange big = kv_range(mask_program("rounding", cmp(ir::CompareOp::LE, near, flt(16777216.0f))));
  EXPECT_EQ(at(big, 0, 0, 100), std::make_pair(std::int64_t{0}, std::int64_t{12}));
  // abs(q - kv) <= float(w): closed form while |w| < 2^24; every key beyond (rounding).
  const ir::Scalar w{"w", ir::Type::Int, {}};
  const Expr band = cmp(ir::CompareOp::LE, to_float(ir::Call::make(ir::Intrinsic::Abs, {q() - kv()})), to_float(int_scalar("w")));
  const KvRange two = kv_range(mask_program("float_band", band, {w}));
  EXPECT_FALSE(kv_range_is_full(two));
  EXPECT_EQ(at(two, 100, 163, 1000, {{"w", ir::Value::integer(10)}}), std::make_pair(std::int64_t{90}, std::int64_t{174}));
  EXPECT_EQ(at(two, 100, 163, 1000, {{"w", ir::Value::integer(std::int64_t{1} << 25)}}),
            std::make_pair(std::int64_t{0}, std::int64_t{1000}));
  // A NaN bound: < is never true, != always.
  const KvRange never = kv_range(mask_program("nan", cmp(ir::CompareOp::LT, to_float(kv()), flt(NAN))));
  const auto [lo, hi] = at(never, 0, 10, 100);
  EXPECT_GE(lo, hi);
  EXPECT_TRUE(kv_range_is_full(kv_range(mask_program("nan_ne", cmp(ir::CompareOp::NE, to_float(kv()), flt(NAN))))));
}

}  // namespace
}  // namespace flexjit::analysis_test

namespace flexjit::analysis_test {
namespace {

// Reads at b and h bound the keys per tile; reads at query positions still do not.
TEST(KvRange, TensorReadsPerBatchAndHeadBound) {
  World w;
  w.B = 2;
  w.Tkv = 1000;
  std::int32_t prefix[2] = {100, 7};
  w.env.tensors["prefix_len"] = {ir::DType::Int32, {2}, {}, prefix};
  const Expr prefix_len = load("prefix_len", ir::DType::Int32, {bv()});
  const ir::Capture capture{"prefix_len", ir::DType::Int32, 1, {}};
  auto range = [&](const KvRange& r, std::int64_t b, std::int64_t q_lo, std::int64_t q_hi) {
    return eval_kv_range(r, w, b, 0, q_lo, q_hi);
  };
  using P = std::pair<std::int64_t, std::int64_t>;
  // Prefix LM, kv < prefix_len[b] or q >= kv: the prefix and the causal part.
  const KvRange lm = kv_range(hand("prefix_lm"));
  EXPECT_FALSE(kv_range_is_full(lm));
  EXPECT_EQ(range(lm, 0, 10, 20), P(0, 100));
  EXPECT_EQ(range(lm, 1, 10, 20), P(0, 21));
  EXPECT_EQ(range(lm, 0, 500, 563), P(0, 564));
  // Bidirectional prefix, q < prefix_len[b] or q >= kv: every key for tiles holding a prefix row.
  const KvRange bi = kv_range(mask_program("prefix_rows", (q() < prefix_len) | (kv() <= q()), {}, {capture}));
  EXPECT_EQ(range(bi, 0, 64, 127), P(0, 1000));
  EXPECT_EQ(range(bi, 0, 128, 191), P(0, 192));
  EXPECT_EQ(range(bi, 1, 0, 63), P(0, 1000));
  EXPECT_EQ(range(bi, 1, 64, 127), P(0, 128));
  // A rank-0 tensor bounds like a runtime scalar.
  std::int64_t offset = 30;
  w.env.tensors["offset"] = {ir::DType::Int64, {}, {}, &offset};
  const KvRange ahead = kv_range(mask_program("ahead", (kv() <= q() + load("offset", ir::DType::Int64, {})) & (kv() >= q()),
                                              {}, {{"offset", ir::DType::Int64, 0, {}}}));
  EXPECT_EQ(range(ahead, 0, 100, 163), P(100, 194));
  // A per-head bool: bidirectional heads see every key, the others are causal.
  std::uint8_t bidirectional[2] = {0, 1};
  w.env.tensors["bidirectional"] = {ir::DType::Bool, {2}, {}, bidirectional};
  const KvRange head = kv_range(mask_program("per_head_flag", load("bidirectional", ir::DType::Bool, {hv()}) | (kv() <= q()),
                                             {}, {{"bidirectional", ir::DType::Bool, 1, {}}}));
  EXPECT_EQ(eval_kv_range(head, w, 0, 0, 10, 20), P(0, 21));
  EXPECT_EQ(eval_kv_range(head, w, 0, 1, 10, 20), P(0, 1000));
}

TEST(KvRange, FloatScalarBoundsAreExact) {
  auto to_float = [](Expr e) { return ir::Cast::make(ir::Type::Float, e); };
  const ir::Scalar x{"x", ir::Type::Float, {}};
  const Expr xv = ir::Var::make("x", ir::Type::Float, ir::VarKind::Scalar);
  // q >= kv and q - kv < x: kv > q - ceil(x); q - kv <= x: kv >= q - floor(x).
  const KvRange lt = kv_range(mask_program("float_window", (q() >= kv()) & cmp(ir::CompareOp::LT, to_float(q() - kv()), xv), {x}));
  const KvRange le = kv_range(mask_program("float_window_le", (q() >= kv()) & cmp(ir::CompareOp::LE, to_float(q() - kv()), xv), {x}));
  EXPECT_FALSE(kv_range_is_full(lt));
  using P = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(at(lt, 100, 163, 1000, {{"x", ir::Value::real(27.5f)}}), P(73, 164));
  EXPECT_EQ(at(lt, 100, 163, 1000, {{"x", ir::Value::real(27.0f)}}), P(74, 164));
  EXPECT_EQ(at(le, 100, 163, 1000, {{"x", ir::Value::real(27.5f)}}), P(73, 164));
  EXPECT_EQ(at(le, 100, 163, 1000, {{"x", ir::Value::real(28.0f)}}), P(72, 164));
  // NaN, inf and magnitudes from 2^24 on give every key the causal half allows.
  for (float big : {NAN, INFINITY, 16777216.0f, 3e9f})
    EXPECT_EQ(at(lt, 100, 163, 1000, {{"x", ir::Value::real(big)}}), P(0, 164)) << big;
  // A query-only float term: rows below x see every key, the rest are causal.
  const KvRange rows = kv_range(mask_program("float_rows", cmp(ir::CompareOp::LT, to_float(q()), xv) | (kv() <= q()), {x}));
  EXPECT_EQ(at(rows, 64, 127, 1000, {{"x", ir::Value::real(64.5f)}}), P(0, 1000));
  EXPECT_EQ(at(rows, 128, 191, 1000, {{"x", ir::Value::real(64.5f)}}), P(0, 192));
}

}  // namespace
}  // namespace flexjit::analysis_test

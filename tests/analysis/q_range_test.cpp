// q_range (kv_range transposed, for the backward) against brute force: for every key of a tile,
// every query whose mask is true lies in [lo, hi), and both ends lie in [0, Tq]. Then the exact
// ranges expected for the mission masks.
#include <gtest/gtest.h>

#include "compiler/tile_ranges.hpp"
#include "ir/ir_printer.hpp"
#include "tests/analysis/random_expr.hpp"
#include "tests/analysis/random_range_mask.hpp"
#include "tests/analysis/range_check.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using compiler::q_range;
using compiler::q_range_is_full;
using compiler::QRange;
using P = std::pair<std::int64_t, std::int64_t>;

TEST(QRange, HandProgramsContainEveryTrueQuery) {
  std::mt19937_64 rng(test_seed(31));
  int bounded = 0;
  for (const auto& np : hand_programs()) {
    SCOPED_TRACE(np.name + " " + show(q_range(np.program)));
    bounded += !q_range_is_full(q_range(np.program));
    check_q_program(np.program, rng, 30, 20, 300);
    ASSERT_FALSE(HasFailure());
  }
  EXPECT_GT(bounded, 10);
}

TEST(QRange, ExamplesContainEveryTrueQuery) {
  if (!have_pipeline()) GTEST_SKIP() << "front end (compiler/pipeline) not built";
  std::mt19937_64 rng(test_seed(32));
  for (const auto& np : example_programs()) {
    SCOPED_TRACE(np.name + " " + show(q_range(np.program)));
    check_q_program(np.program, rng, 30, 20, 300);
    ASSERT_FALSE(HasFailure());
  }
}

TEST(QRange, RandomMasksContainEveryTrueQuery) {
  std::mt19937_64 rng(test_seed(33));
  std::int64_t skipped = 0;
  int bounded = 0;
  for (int i = 0; i < 600; ++i) {
    ExprGen gen(rng, /*tame=*/true);
    const ir::Program p =
        mask_program("random", gen.bool_expr(static_cast<int>(uniform(rng, 1, 4))), ExprGen::scalars(), ExprGen::captures());
    bounded += !q_range_is_full(q_range(p));
    check_q_program(p, rng, 2, 6, 80, &skipped);
    ASSERT_FALSE(HasFailure());
  }
  EXPECT_GT(bounded, 150);
  EXPECT_GT(skipped, 0);
}

// The kv_range tests' atoms with q_idx and kv_idx swapped are the same shapes solved for the query
// (linear in q, q // C, abs, floats); unswapped, q sits on the side that used to be the tile's.
TEST(QRange, RandomAtomsContainEveryTrueQuery) {
  std::mt19937_64 rng(test_seed(34));
  int bounded = 0;
  for (int i = 0; i < 400; ++i) {
    const Expr m = random_atom_mask(rng);
    for (const Expr& body : {swap_q_and_kv(m), m}) {
      const ir::Program p = mask_program("atoms", body, ExprGen::scalars(), ExprGen::captures());
      bounded += !q_range_is_full(q_range(p));
      check_q_program(p, rng, 2, 8, 80);
      ASSERT_FALSE(HasFailure());
    }
  }
  EXPECT_GT(bounded, 300);
}

TEST(QRange, RandomFloatAndKeyTermsContainEveryTrueQuery) {
  std::mt19937_64 rng(test_seed(35));
  int bounded = 0;
  for (int i = 0; i < 600; ++i) {
    const Expr m = swap_q_and_kv(random_float_and_query_mask(rng));
    const ir::Program p = mask_program("float_and_key", m, ExprGen::scalars(), ExprGen::captures());
    bounded += !q_range_is_full(q_range(p));
    check_q_program(p, rng, 3, 8, 90, nullptr, uniform(rng, 0, 1) ? scalars_near_2_24 : tame_scalars);
    ASSERT_FALSE(HasFailure());
  }
  EXPECT_GT(bounded, 200);
}

// ---- Precision: the mission masks.

const ir::Program& hand(const std::string& name) {
  static const std::vector<NamedProgram> programs = hand_programs();
  for (const auto& np : programs)
    if (np.name == name) return np.program;
  throw std::runtime_error("no hand program " + name);
}

P at(const QRange& r, std::int64_t k_lo, std::int64_t k_hi, std::int64_t Tq, std::map<std::string, ir::Value> scalars = {}) {
  World w;
  w.Tq = Tq;
  w.env.scalars = std::move(scalars);
  return eval_q_range(r, w, 0, 0, k_lo, k_hi);
}

TEST(QRange, CausalIsSuffix) {
  const QRange r = q_range(hand("causal"));
  EXPECT_FALSE(q_range_is_full(r));
  EXPECT_EQ(ir::to_string(r.hi), "Tq");
  for (std::int64_t k_lo : {0, 5, 64, 1000})
    for (std::int64_t len : {1, 3, 64})
      for (std::int64_t Tq : {1, 70, 2000}) {
        const std::int64_t k_hi = k_lo + len - 1;
        EXPECT_EQ(at(r, k_lo, k_hi, Tq), P(std::min(k_lo, Tq), Tq)) << show(r) << " k [" << k_lo << ", " << k_hi << "] Tq " << Tq;
      }
  // ALiBi's score mod changes nothing; document and dilated masks keep their causal half.
  EXPECT_EQ(at(q_range(hand("alibi_causal")), 10, 20, 100), P(10, 100));
  EXPECT_EQ(at(q_range(hand("document")), 10, 20, 100), P(10, 100));
  EXPECT_EQ(at(q_range(hand("dilated")), 10, 20, 100, {{"dilation", ir::Value::integer(3)}}), P(10, 100));
  // kv <= q + offset: queries from k_lo - offset on.
  EXPECT_EQ(at(q_range(hand("causal_offset")), 200, 263, 1000, {{"offset", ir::Value::integer(100)}}), P(100, 1000));
}

TEST(QRange, WindowIsBand) {
  for (const char* name : {"sliding_window", "window_chained_let"}) {
    const QRange r = q_range(hand(name));
    for (std::int64_t w : {1, 16, 100, 5000})
      for (std::int64_t k_lo : {0, 64, 1000})
        for (std::int64_t Tq : {50, 1100, 9000}) {
          const std::int64_t k_hi = k_lo + 63;
          const P want(std::min(k_lo, Tq), std::clamp<std::int64_t>(k_hi + w, 0, Tq));
          EXPECT_EQ(at(r, k_lo, k_hi, Tq, {{"window", ir::Value::integer(w)}}), want)
              << name << " " << show(r) << " w " << w << " k_lo " << k_lo << " Tq " << Tq;
        }
  }
  // not (kv > q or kv < q - w): q in [kv, kv + w]
  EXPECT_EQ(at(q_range(hand("negated_window")), 100, 163, 1000, {{"window", ir::Value::integer(10)}}), P(100, 174));
}

TEST(QRange, SinkKeysReachEveryLaterQuery) {
  // causal & (q - kv < w | kv < 4): a tile holding a sink key is seen by every query from it on.
  const QRange r = q_range(hand("sink_window"));
  const std::map<std::string, ir::Value> w128{{"window", ir::Value::integer(128)}};
  EXPECT_EQ(at(r, 0, 63, 5000, w128), P(0, 5000));
  EXPECT_EQ(at(r, 3, 66, 5000, w128), P(3, 5000));
  EXPECT_EQ(at(r, 4, 67, 5000, w128), P(4, 67 + 128));
  EXPECT_EQ(at(r, 1000, 1063, 5000, w128), P(1000, 1063 + 128));
}

TEST(QRange, ChunkedEndsWithTheChunk) {
  const QRange r = q_range(hand("chunked"));  // chunk 64, causal
  EXPECT_EQ(at(r, 130, 139, 1000), P(130, 192));
  EXPECT_EQ(at(r, 64, 191, 1000), P(64, 192));
  EXPECT_EQ(at(r, 960, 1023, 1000), P(960, 1000));
}

TEST(QRange, NeighbourhoodSpansTheRowsInReach) {
  // abs(q // 64 - kv // 64) <= 7 and abs(q % 64 - kv % 64) <= 7: queries within 7 image rows.
  auto iabs = [](Expr x) { return ir::Call::make(ir::Intrinsic::Abs, {x}); };
  const Expr rows = iabs(fdiv(q(), c(64)) - fdiv(kv(), c(64))) <= c(7);
  const Expr cols = iabs(mod(q(), c(64)) - mod(kv(), c(64))) <= c(7);
  const QRange r = q_range(mask_program("neighbourhood", rows && cols));
  EXPECT_FALSE(q_range_is_full(r));
  EXPECT_EQ(at(r, 20 * 64, 22 * 64 - 1, 100 * 64), P(13 * 64, 29 * 64));
  EXPECT_EQ(at(r, 0, 127, 100 * 64), P(0, 9 * 64));
}

TEST(QRange, UnboundedMasksAreFull) {
  EXPECT_TRUE(q_range_is_full(q_range(ir::Program{})));  // no mask_mod
  EXPECT_TRUE(q_range_is_full(q_range(mask_program("stride", mod(q() - kv(), c(3)) == c(0)))));
  const ir::Scalar s{"Tq", ir::Type::Int, {}};
  // A user scalar named like a range variable stays the user's: the variable kinds differ.
  const QRange user = q_range(mask_program("clash", q() < int_scalar("Tq"), {s}));
  EXPECT_FALSE(q_range_is_full(user));
  EXPECT_EQ(at(user, 0, 10, 100, {{"Tq", ir::Value::integer(50)}}), P(0, 50));
  // A mask that is never true gives an empty range.
  const auto [lo, hi] = at(q_range(mask_program("never", (q() < c(4)) && (q() > c(10)))), 0, 10, 100);
  EXPECT_GE(lo, hi);
  // A mask reading the queries' own positions bounds nothing.
  const ir::Capture doc{"doc_ids", ir::DType::Int32, 1, {}};
  EXPECT_TRUE(q_range_is_full(q_range(mask_program(
      "same_doc", load("doc_ids", ir::DType::Int32, {q()}) == load("doc_ids", ir::DType::Int32, {kv()}), {}, {doc}))));
}

// Key-only terms decide per key tile, as query-only terms do per query tile in kv_range.
TEST(QRange, KeyTermsDecidePerTile) {
  World w;
  w.B = 2;
  w.Tq = 1000;
  std::int32_t prefix[2] = {100, 7};
  w.env.tensors["prefix_len"] = {ir::DType::Int32, {2}, {}, prefix};
  // Prefix LM, kv < prefix_len[b] or q >= kv: prefix keys reach every query, the others the later ones.
  const QRange lm = q_range(hand("prefix_lm"));
  EXPECT_FALSE(q_range_is_full(lm));
  EXPECT_EQ(eval_q_range(lm, w, 0, 0, 64, 127), P(0, 1000));
  EXPECT_EQ(eval_q_range(lm, w, 0, 0, 128, 191), P(128, 1000));
  EXPECT_EQ(eval_q_range(lm, w, 1, 0, 0, 63), P(0, 1000));
  EXPECT_EQ(eval_q_range(lm, w, 1, 0, 64, 127), P(64, 1000));
  // Padding, q < len[b] and kv < len[b], causal: key tiles past the length reach no query.
  const ir::Capture len{"len", ir::DType::Int32, 1, {}};
  std::int32_t lens[2] = {300, 50};
  w.env.tensors["len"] = {ir::DType::Int32, {2}, {}, lens};
  const Expr n = load("len", ir::DType::Int32, {bv()});
  const QRange pad = q_range(mask_program("padded", (q() < n) & (kv() < n) & (q() >= kv()), {}, {len}));
  EXPECT_EQ(eval_q_range(pad, w, 0, 0, 64, 127), P(64, 300));
  const auto [lo, hi] = eval_q_range(pad, w, 1, 0, 64, 127);
  EXPECT_GE(lo, hi);
  // kv < s: every query for the key tiles holding a key below s, none for the others.
  const QRange below = q_range(mask_program("keys_below", kv() < int_scalar("s"), {{"s", ir::Type::Int, {}}}));
  w.env.scalars["s"] = ir::Value::integer(50);
  EXPECT_EQ(eval_q_range(below, w, 0, 0, 0, 63), P(0, 1000));
  const auto [lo2, hi2] = eval_q_range(below, w, 0, 0, 50, 63);
  EXPECT_GE(lo2, hi2);
  // A per-head choice: heads below 2 are causal, the others see every key.
  const QRange head = q_range(mask_program("per_head", (hv() >= c(2)) || (kv() <= q())));
  EXPECT_EQ(eval_q_range(head, w, 0, 1, 10, 20), P(10, 1000));
  EXPECT_EQ(eval_q_range(head, w, 0, 2, 10, 20), P(0, 1000));
}

TEST(QRange, FloatBoundsAreExact) {
  auto to_float = [](Expr e) { return ir::Cast::make(ir::Type::Float, e); };
  // q >= kv and q - kv < 28.0: q in [kv, kv + 28).
  const Expr bound = cmp(ir::CompareOp::LT, to_float(q() - kv()), ir::FloatImm::make(28.0f));
  const QRange r = q_range(mask_program("float_window", (q() >= kv()) & bound));
  EXPECT_EQ(at(r, 100, 163, 1000), P(100, 191)) << show(r);
}

}  // namespace
}  // namespace flexjit::analysis_test

// classify_tile against brute force: Empty => the mask is false at every in-range element of the
// tile, Full => true at every one. Over the hand-built masks, examples/*.py and random masks, with
// random worlds and tiles; then precision expectations for the masks users write.
#include <gtest/gtest.h>

#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "compiler/tile_class.hpp"
#include "tests/analysis/random_expr.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using compiler::classify_tile;
using compiler::TileClass;

struct Tally {
  int tiles = 0, empty = 0, full = 0;
};

// Checks one tile; returns its class.
TileClass check_tile(const ir::Program& p, const World& w, std::int64_t b, std::int64_t h, const Tile& tile) {
  const TileClass cls = classify_tile(p, query(w, b, h, tile));
  if (cls == TileClass::Partial) return cls;
  const bool want = cls == TileClass::Full;
  for (std::int64_t qi = tile.q0; qi < std::min(tile.q1, w.Tq); ++qi)
    for (std::int64_t ki = tile.k0; ki < std::min(tile.k1, w.Tkv); ++ki) {
      const bool m = ir::eval_mask(p, w.env, b, h, qi, ki);
      if (m != want) {
        ADD_FAILURE() << p.name << ": tile q[" << tile.q0 << ", " << tile.q1 << ") kv[" << tile.k0 << ", " << tile.k1
                      << ") b=" << b << " h=" << h << " Tq=" << w.Tq << " Tkv=" << w.Tkv << " classified "
                      << compiler::tile_class_name(cls) << " but mask(" << qi << ", " << ki << ") = " << m << "\n"
                      << (p.mask_mod ? ir::to_string(p.mask_mod->body) : std::string("(no mask)"));
        return cls;
      }
    }
  return cls;
}

Tally check_program(const ir::Program& p, std::mt19937_64& rng, int worlds, int tiles_per_world,
                    std::int64_t max_t = 300) {
  Tally tally;
  for (int i = 0; i < worlds; ++i) {
    const World w = random_world(p, rng, max_t);
    for (int j = 0; j < tiles_per_world; ++j) {
      const Tile tile = random_tile(w, rng);
      const TileClass cls = check_tile(p, w, uniform(rng, 0, w.B - 1), uniform(rng, 0, w.H - 1), tile);
      if (::testing::Test::HasFailure()) return tally;
      ++tally.tiles;
      tally.empty += cls == TileClass::Empty;
      tally.full += cls == TileClass::Full;
    }
  }
  return tally;
}

TEST(TileClass, HandProgramsAgreeWithBruteForce) {
  std::mt19937_64 rng(test_seed(1));
  for (const auto& np : hand_programs()) {
    SCOPED_TRACE(np.name);
    const Tally t = check_program(np.program, rng, 40, 60);
    ASSERT_FALSE(HasFailure());
    EXPECT_EQ(t.tiles, 40 * 60);
    RecordProperty(np.name + "_empty", t.empty);
    RecordProperty(np.name + "_full", t.full);
  }
}

TEST(TileClass, ExamplesAgreeWithBruteForce) {
  if (!have_pipeline()) GTEST_SKIP() << "front end (compiler/pipeline) not built";
  std::mt19937_64 rng(test_seed(2));
  for (const auto& np : example_programs()) {
    SCOPED_TRACE(np.name);
    check_program(np.program, rng, 40, 60);
    ASSERT_FALSE(HasFailure());
  }
}

TEST(TileClass, RandomMasksAgreeWithBruteForce) {
  std::mt19937_64 rng(test_seed(3));
  int decided = 0, tiles = 0;
  for (int i = 0; i < 400; ++i) {
    ExprGen gen(rng, uniform(rng, 0, 1) == 1);
    const ir::Program p =
        mask_program("random", gen.bool_expr(static_cast<int>(uniform(rng, 1, 5))), ExprGen::scalars(), ExprGen::captures());
    const Tally t = check_program(p, rng, 3, 12, 100);
    ASSERT_FALSE(HasFailure());
    decided += t.empty + t.full;
    tiles += t.tiles;
  }
  EXPECT_GT(decided, tiles / 10) << decided << " of " << tiles << " tiles decided";
}

// ---- Precision: what the analysis must prove for the common masks.

const ir::Program& hand(const std::string& name) {
  static const std::vector<NamedProgram> programs = hand_programs();
  for (const auto& np : programs)
    if (np.name == name) return np.program;
  throw std::runtime_error("no hand program " + name);
}

TileClass classify(const std::string& name, std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1,
                   std::map<std::string, compiler::ScalarValue> scalars = {}, std::int64_t T = 1 << 20) {
  compiler::TileQuery t;
  t.q0 = q0;
  t.q1 = q1;
  t.k0 = k0;
  t.k1 = k1;
  t.Tq = T;
  t.Tkv = T;
  t.scalars = std::move(scalars);
  return classify_tile(hand(name), t);
}

TEST(TileClass, CausalPrecision) {
  EXPECT_EQ(classify("causal", 128, 192, 0, 64), TileClass::Full);      // strictly below the diagonal
  EXPECT_EQ(classify("causal", 128, 192, 64, 128), TileClass::Full);    // touching it from below
  EXPECT_EQ(classify("causal", 128, 192, 128, 192), TileClass::Partial);  // on it
  EXPECT_EQ(classify("causal", 128, 192, 192, 256), TileClass::Empty);  // strictly above
  EXPECT_EQ(classify("alibi_causal", 128, 192, 192, 256), TileClass::Empty);
  EXPECT_EQ(classify("causal_offset", 0, 64, 36, 101, {{"offset", std::int64_t{100}}}), TileClass::Full);
  EXPECT_EQ(classify("causal_offset", 0, 64, 100, 164, {{"offset", std::int64_t{100}}}), TileClass::Partial);
  EXPECT_EQ(classify("causal_offset", 0, 64, 164, 200, {{"offset", std::int64_t{100}}}), TileClass::Empty);
}

TEST(TileClass, WindowPrecision) {
  const std::map<std::string, compiler::ScalarValue> w{{"window", std::int64_t{256}}};
  for (const char* name : {"sliding_window", "window_chained_let", "negated_window"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(classify(name, 1024, 1088, 0, 64, w), TileClass::Empty);      // far behind the window
    EXPECT_EQ(classify(name, 1024, 1088, 832, 896, w), TileClass::Full);    // inside it
    EXPECT_EQ(classify(name, 1024, 1088, 768, 832, w), TileClass::Partial);  // on its edge
    EXPECT_EQ(classify(name, 1024, 1088, 1152, 1216, w), TileClass::Empty);  // future
  }
  // Sinks stay visible far away; the middle does not.
  EXPECT_EQ(classify("sink_window", 1024, 1088, 0, 4, w), TileClass::Full);
  EXPECT_EQ(classify("sink_window", 1024, 1088, 0, 64, w), TileClass::Partial);
  EXPECT_EQ(classify("sink_window", 1024, 1088, 64, 128, w), TileClass::Empty);
}

TEST(TileClass, ChunkedPrecision) {
  EXPECT_EQ(classify("chunked", 130, 140, 128, 130), TileClass::Full);    // inside one chunk, below diagonal
  EXPECT_EQ(classify("chunked", 130, 140, 64, 128), TileClass::Empty);    // previous chunk
  EXPECT_EQ(classify("chunked_scalar", 8200, 8300, 8192, 8200, {{"chunk", std::int64_t{8192}}}), TileClass::Full);
  EXPECT_EQ(classify("chunked_scalar", 8200, 8300, 0, 128, {{"chunk", std::int64_t{8192}}}), TileClass::Empty);
}

TEST(TileClass, TensorMasks) {
  // Tensor reads are unknown: Partial, unless anded with something Empty.
  EXPECT_EQ(classify("document", 128, 192, 0, 64), TileClass::Partial);
  EXPECT_EQ(classify("document", 128, 192, 192, 256), TileClass::Empty);
  EXPECT_EQ(classify("prefix_lm", 128, 192, 0, 64), TileClass::Full);  // causal alone proves it
  EXPECT_EQ(classify("prefix_lm", 128, 192, 192, 256), TileClass::Partial);
  EXPECT_EQ(classify("document_window_sinks", 1024, 1088, 64, 128), TileClass::Empty);
}

TEST(TileClass, DilatedAndFlags) {
  const std::map<std::string, compiler::ScalarValue> d{{"dilation", std::int64_t{16}}};
  EXPECT_EQ(classify("dilated", 100, 101, 81, 84, d), TileClass::Empty);    // q - kv in [17, 19]: never 0 mod 16
  EXPECT_EQ(classify("dilated", 100, 101, 84, 85, d), TileClass::Full);     // q - kv = 16
  EXPECT_EQ(classify("dilated", 128, 192, 0, 64, d), TileClass::Partial);   // spans whole periods
  EXPECT_EQ(classify("optional_causal", 128, 192, 192, 256, {{"is_causal", false}}), TileClass::Full);
  EXPECT_EQ(classify("optional_causal", 128, 192, 192, 256, {{"is_causal", true}}), TileClass::Empty);
  EXPECT_EQ(classify("optional_causal", 128, 192, 192, 256), TileClass::Partial);  // flag unknown
}

TEST(TileClass, SequenceEnds) {
  compiler::TileQuery t;
  t.Tq = 100;
  t.Tkv = 70;
  t.q0 = 70;
  t.q1 = 134;
  t.k0 = 64;
  t.k1 = 128;
  // Straddling Tkv: only keys [64, 70) count, all <= q.
  EXPECT_EQ(classify_tile(hand("causal"), t), TileClass::Full);
  t.k0 = 70;
  EXPECT_EQ(classify_tile(hand("causal"), t), TileClass::Empty);  // entirely past Tkv
  t.k0 = 0;
  t.q0 = 100;
  EXPECT_EQ(classify_tile(hand("causal"), t), TileClass::Empty);  // entirely past Tq
  ir::Program none;
  t.q0 = 0;
  EXPECT_EQ(classify_tile(none, t), TileClass::Full);  // no mask_mod
}

}  // namespace
}  // namespace flexjit::analysis_test

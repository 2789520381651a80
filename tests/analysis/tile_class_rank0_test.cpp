// Tile classification of masks that read rank-0 captured tensors (`offset = torch.tensor(5)`): with
// the element the call binds, the class agrees with brute force and is as precise as with a runtime
// scalar in its place; without it, the element is its dtype's range.
#include <gtest/gtest.h>

#include "compiler/tile_class.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_printer.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using compiler::classify_tile;
using compiler::TileClass;

const std::vector<ir::Capture> kRank0 = {{"offset", ir::DType::Int64, 0, {}},
                                         {"width", ir::DType::Int32, 0, {}},
                                         {"bidirectional", ir::DType::Bool, 0, {}}};

Expr offset() { return load("offset", ir::DType::Int64, {}); }
Expr width() { return load("width", ir::DType::Int32, {}); }
Expr bidirectional() { return load("bidirectional", ir::DType::Bool, {}); }

std::vector<NamedProgram> rank0_masks() {
  return {
      {"causal_offset", mask_program("causal_offset", kv() <= q() + offset(), {}, kRank0)},
      {"window", mask_program("window", (kv() <= q()) && (q() - kv() < width()), {}, kRank0)},
      {"optional_causal", mask_program("optional_causal", bidirectional() || (kv() <= q()), {}, kRank0)},
      {"not_flag", mask_program("not_flag", !bidirectional() && (kv() >= q() - width() * c(2)), {}, kRank0)},
  };
}

// Whether cls holds at every in-range element of the tile.
bool holds(const ir::Program& p, const World& w, std::int64_t b, std::int64_t h, const Tile& t, TileClass cls) {
  if (cls == TileClass::Partial) return true;
  for (std::int64_t qi = t.q0; qi < std::min(t.q1, w.Tq); ++qi)
    for (std::int64_t ki = t.k0; ki < std::min(t.k1, w.Tkv); ++ki)
      if (ir::eval_mask(p, w.env, b, h, qi, ki) != (cls == TileClass::Full)) return false;
  return true;
}

TEST(TileClassRank0, AgreesWithBruteForceAndUsesTheElement) {
  std::mt19937_64 rng(test_seed(41));
  for (const auto& np : rank0_masks()) {
    int decided = 0, decided_blind = 0;
    for (int i = 0; i < 40; ++i) {
      const World w = random_world(np.program, rng, 200);
      for (int j = 0; j < 30; ++j) {
        const Tile tile = random_tile(w, rng);
        compiler::TileQuery tq = query(w, 0, 0, tile);
        ASSERT_EQ(tq.rank0_tensors.size(), 3u);
        const TileClass cls = classify_tile(np.program, tq);
        ASSERT_TRUE(holds(np.program, w, 0, 0, tile, cls))
            << np.name << " classified " << compiler::tile_class_name(cls) << " for q [" << tile.q0 << ", " << tile.q1
            << ") kv [" << tile.k0 << ", " << tile.k1 << ")\n" << ir::to_string(np.program.mask_mod->body);
        tq.rank0_tensors.clear();
        const TileClass blind = classify_tile(np.program, tq);
        ASSERT_TRUE(blind == TileClass::Partial || blind == cls) << np.name;
        decided += cls != TileClass::Partial;
        decided_blind += blind != TileClass::Partial;
      }
    }
    EXPECT_GT(decided, decided_blind) << np.name;  // the element makes tiles Empty or Full
  }
}

TEST(TileClassRank0, ClassesOfACausalOffset) {
  std::int64_t value = 5;
  World w;
  w.Tq = w.Tkv = 1000;
  w.env.tensors["offset"] = {ir::DType::Int64, {}, {}, &value};
  const ir::Program p = mask_program("causal_offset", kv() <= q() + offset(), {}, {kRank0[0]});
  compiler::TileQuery tq = query(w, 0, 0, Tile{64, 128, 0, 64});
  EXPECT_EQ(classify_tile(p, tq), TileClass::Full);
  tq.k0 = 192;
  tq.k1 = 256;
  EXPECT_EQ(classify_tile(p, tq), TileClass::Empty);  // keys from 192 > 127 + 5
  tq.k0 = 128;
  tq.k1 = 192;
  EXPECT_EQ(classify_tile(p, tq), TileClass::Partial);  // keys up to 132 are kept
  tq.rank0_tensors.clear();
  tq.k0 = 192;
  tq.k1 = 256;
  EXPECT_EQ(classify_tile(p, tq), TileClass::Partial);  // without the element: any int64
}

}  // namespace
}  // namespace flexjit::analysis_test

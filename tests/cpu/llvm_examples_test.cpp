// Every examples/*.py program: the LLVM mods (per position and per row) agree bit for bit with
// eval_mask / eval_score / eval_sink at random positions, scores and bindings.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "cpu/args.hpp"
#include "ir/interpreter.hpp"
#include "cpu/llvm_backend.hpp"
#include "random_program.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using cpu_test::RandomWorld;

constexpr std::int64_t kExtent = 80;          // positions (q, kv) stay below it
constexpr std::int64_t kCaptureExtent = 260;  // every capture dimension (relative_position_bias reads up to 256)

TEST(LlvmExamples, ModsMatchTheInterpreter) {
  SKIP_WITHOUT_LLVM();
  const auto programs = cpu_test::example_programs();
  ASSERT_GE(programs.size(), 10u);
  std::mt19937_64 rng(99);
  auto pos = [&](std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(0, hi - 1)(rng); };
  for (const auto& [name, p] : programs) {
    SCOPED_TRACE(name);
    const cpu::CompiledMods mods(p);
    EXPECT_EQ(mods.has_mask(), p.mask_mod.has_value());
    EXPECT_EQ(mods.has_score(), p.score_mod.has_value());
    EXPECT_EQ(mods.has_sink(), p.sink.has_value());
    int checked = 0;
    for (int w = 0; w < 20; ++w) {
      const RandomWorld world = RandomWorld::for_program(p, kCaptureExtent, rng);
      const cpu::CpuBinding bound(p, world.env);
      for (int k = 0; k < 200; ++k) {
        const std::int64_t b = pos(4), h = pos(8), q = pos(kExtent), kv = pos(kExtent);
        const float s = std::uniform_real_distribution<float>(-30, 30)(rng);
        ASSERT_EQ(mods.mask(bound, b, h, q, kv), ir::eval_mask(p, world.env, b, h, q, kv)) << b << " " << h << " " << q << " " << kv;
        ASSERT_TRUE(ir::identical(ir::Value::real(mods.score(bound, b, h, q, kv, s)),
                                  ir::Value::real(ir::eval_score(p, world.env, b, h, q, kv, s))))
            << b << " " << h << " " << q << " " << kv << " " << s;
        ASSERT_TRUE(ir::identical(ir::Value::real(mods.sink(bound, b, h)), ir::Value::real(ir::eval_sink(p, world.env, b, h))));
        ++checked;
      }
      // Whole rows: the loop versions agree with the per-position ones.
      const std::int64_t b = pos(4), h = pos(8), q = pos(kExtent);
      std::vector<std::uint8_t> keep(kExtent);
      std::vector<float> s(kExtent);
      for (auto& x : s) x = std::uniform_real_distribution<float>(-30, 30)(rng);
      std::vector<float> s0 = s;
      mods.mask_row(bound, b, h, q, 0, kExtent, keep.data());
      mods.score_row(bound, b, h, q, 0, kExtent, keep.data(), s.data());
      ASSERT_NO_THROW(bound.check());
      for (std::int64_t j = 0; j < kExtent; ++j) {
        ASSERT_EQ(keep[j] != 0, ir::eval_mask(p, world.env, b, h, q, j)) << "row " << q << " key " << j;
        const float want = keep[j] ? ir::eval_score(p, world.env, b, h, q, j, s0[j]) : s0[j];
        ASSERT_TRUE(ir::identical(ir::Value::real(s[j]), ir::Value::real(want))) << "row " << q << " key " << j;
      }
    }
    EXPECT_EQ(checked, 20 * 200);
  }
}

}  // namespace

// FlexAttention code as people publish it (tests/cpu/flexattention_corpus/*.py: generators with
// parameters, closures, combinators, helpers, imports, decorators, tuples, tensor methods, shapes,
// asserts checked per call, float bounds), each compiled as written and run by CPU attention
// against the float64 reference. A program with a twin in plain/ (the same mods written with the
// language's basic forms) must also give the twin's mask and scores at every position of a grid,
// which pins down what the constructs mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "attention_problem.hpp"
#include "compiler/pipeline.hpp"
#include "ir/bound_values.hpp"
#include "random_program.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cpu_test;

const fs::path kCorpus = fs::path(FLEXJIT_SOURCE_DIR) / "tests/cpu/flexattention_corpus";

std::vector<fs::path> corpus_programs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.path().extension() == ".py") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

ir::Program compile(const fs::path& p) { return compiler::build_ir(dsl::SourceFile::from_path(p.string())); }

// Every position of a small grid, a few scores, and the sink of every head.
void expect_same_mods(const ir::Program& p, const ir::Program& twin, const ir::Env& env) {
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 4; ++h) {
      EXPECT_EQ(ir::eval_sink(p, env, b, h), ir::eval_sink(twin, env, b, h));
      for (int q = 0; q < 67; q += 3)
        for (int kv = 0; kv < 90; kv += 2) {
          ASSERT_EQ(ir::eval_mask(p, env, b, h, q, kv), ir::eval_mask(twin, env, b, h, q, kv))
              << "b " << b << " h " << h << " q_idx " << q << " kv_idx " << kv;
          for (float s : {-1.5f, 0.25f, 3.0f}) {
            const float got = ir::eval_score(p, env, b, h, q, kv, s), want = ir::eval_score(twin, env, b, h, q, kv, s);
            ASSERT_NEAR(got, want, 1e-5f * std::max(1.0f, std::abs(want)))
                << "score " << s << " b " << b << " h " << h << " q_idx " << q << " kv_idx " << kv;
          }
        }
    }
}

class FlexAttentionCorpus : public testing::TestWithParam<fs::path> {};

TEST_P(FlexAttentionCorpus, CompilesAsWrittenAndMatchesTheReference) {
  const ir::Program p = compile(GetParam());
  std::mt19937_64 rng(17);
  const RandomWorld world = RandomWorld::for_program(p, 96, rng);
  EXPECT_EQ(ir::failed_checks(p, world.env), std::vector<std::string>{});  // the asserts hold for these bindings
  const Problem pb({2, 4, 2, 67, 90, 16}, &world.env, rng);
  expect_matches_reference(p, pb, pb.run(p, cpu::CpuBackend::Auto));

  const fs::path twin = kCorpus / "plain" / GetParam().filename();
  if (fs::exists(twin)) expect_same_mods(p, compile(twin), world.env);
}

INSTANTIATE_TEST_SUITE_P(Programs, FlexAttentionCorpus, testing::ValuesIn(corpus_programs()),
                         [](const testing::TestParamInfo<fs::path>& info) { return info.param.stem().string(); });

}  // namespace

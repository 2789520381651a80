// Global positions on CUDA kernels (ForwardOptions::q_offset, kv_offset: a shard of a longer
// sequence, as context parallelism runs it) against the float64 oracle, which gives the mods
// i + q_offset and j + kv_offset: the forward of both families on masks in closed form, masks that
// read tensors (with and without a block mask built at the same offsets), block lists and score
// mods that read positions; the backward of both families (captured tensors' gradients included);
// a shard pair no query of which sees a key (out 0, lse -inf, zero gradients). The captured
// tensors cover the global positions (case_bindings.hpp). Decode with offsets: decode_test.cpp.
#include <gtest/gtest.h>

#include "tests/gpu/backward_run.hpp"

namespace flexjit::gpu_test {
namespace {

struct Offsets {
  int q, kv;
};
// Queries after the keys, keys after the queries (a causal mask keeps nothing), and a query shard
// far along the sequence with the keys from its start.
constexpr Offsets kOffsets[] = {{300, 280}, {0, 1000}, {4096, 0}};

Case at(Case c, Offsets o) {
  c.q_offset = o.q, c.kv_offset = o.kv;
  return c;
}

std::vector<Case> forward_cases() {
  std::vector<Case> out;
  for (const char* program : {"causal", "sliding_window", "alibi_softcap_window", "document", "prefix_lm",
                              "relative_position_bias", "neighbourhood_2d"})
    for (const char* family : {"sm90_fwd", "sm80_fwd"})
      for (const Offsets o : kOffsets)
        out.push_back(at({.program = program, .D = 128, .B = 2, .Hq = 4, .Hkv = 2, .Tq = 333, .Tkv = 517,
                          .family = family},
                         o));
  // Block lists name this call's kv blocks; the mask on top sees global positions.
  for (const Offsets o : kOffsets)
    out.push_back(at({.program = "topk_causal", .D = 64, .B = 1, .Hq = 4, .Hkv = 2, .Tq = 256, .Tkv = 384}, o));
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) { return info.param.name(); }

class PositionsForward : public GpuTest, public testing::WithParamInterface<Case> {};

TEST_P(PositionsForward, MatchesReference) {
  const Case& c = GetParam();
  if (c.family == "sm90_fwd" && jit::device_arch(0) != "sm_90a") GTEST_SKIP() << "sm90_fwd runs on sm_90a only";
  AttentionRun run(c, std::hash<std::string>{}(c.name()));
  run.run_and_check();
  if (run.kernel().needs_block_mask()) {
    // The map is built by the kernel for offsets, at the call's offsets, and checked tile by tile
    // against the mask at global positions.
    run.use_block_mask(true);
    run.run_and_check();
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, PositionsForward, testing::ValuesIn(forward_cases()), case_name);

std::vector<Case> backward_cases() {
  std::vector<Case> out;
  for (const char* program : {"causal", "alibi_softcap_window", "document", "relative_position_bias"})
    for (const char* family : {"sm90_bwd", "sm80_bwd"})
      for (const Offsets o : {kOffsets[0], kOffsets[1]})
        out.push_back(at({.program = program, .D = 64, .B = 1, .Hq = 4, .Hkv = 2, .Tq = 200, .Tkv = 331,
                          .backward_family = family},
                         o));
  return out;
}

class PositionsBackward : public GpuTest, public testing::WithParamInterface<Case> {};

TEST_P(PositionsBackward, MatchesReference) {
  const Case& c = GetParam();
  if (c.backward_family == "sm90_bwd" && jit::device_arch(0) != "sm_90a") GTEST_SKIP() << "sm90_bwd runs on sm_90a only";
  BackwardRun run(c, std::hash<std::string>{}(c.name()));
  const BackwardFigures f = run.run_and_check();
  // Keys 1000 on, queries 0 to 199: a causal mask keeps nothing, so every gradient is exactly 0.
  if (c.program == "causal" && c.kv_offset == 1000) {
    EXPECT_EQ(f.empty_rows, c.B * c.Hq * c.Tq);
    EXPECT_EQ(f.unseen_keys, c.B * c.Hkv * c.Tkv);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, PositionsBackward, testing::ValuesIn(backward_cases()), case_name);

class Positions : public GpuTest {};

// The offsets are runtime values: the first call with offsets compiles the kernel that adds them,
// every other offset (and the calls without) compiles nothing more.
TEST_F(Positions, NewOffsetsCompileNothing) {
  AttentionRun run(at({.program = "sliding_window", .D = 64, .B = 1, .Hq = 2, .Tq = 300, .Tkv = 300}, {64, 0}), 21);
  run.bindings().scalars["window"] = 100LL;
  run.run_and_check();
  const auto compiles = engine().counters().compiles;
  for (const Offsets o : {Offsets{0, 64}, Offsets{1000, 900}, Offsets{0, 0}}) {
    Case c = at(run.spec(), o);
    AttentionRun again(c, 21);
    again.bindings().scalars["window"] = 100LL;
    again.run_and_check();
  }
  EXPECT_EQ(engine().counters().compiles, compiles);
}

}  // namespace
}  // namespace flexjit::gpu_test

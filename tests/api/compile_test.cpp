// Engine::compile without a GPU: the source is there to read, the cache counts, and programs or
// options the kernels cannot run are refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

TEST(Compile, SourceAndEntryName) {
  const Kernel& k = alibi_kernel();
  EXPECT_EQ(k.entry_name(), "flexjit_fwd_alibi_softcap_window_d64_bf16");
  EXPECT_THAT(k.cuda_source(), HasSubstr("extern \"C\" __global__"));
  EXPECT_THAT(k.cuda_source(), HasSubstr(k.entry_name()));
  EXPECT_THAT(k.cuda_source(), HasSubstr("#include \"attention_fwd_sm80.cuh\""));
  EXPECT_THAT(k.cuda_source(true), HasSubstr("// ---- begin attention_fwd_sm80.cuh ----"));
  EXPECT_EQ(k.head_dim(), 64);
  EXPECT_EQ(k.dtype(), bf16);
  EXPECT_EQ(k.arch(), "sm_90a");
}

TEST(Compile, SecondCompileIsACacheHit) {
  Engine jit(EngineOptions{.disk_cache = false});
  Program p = example("causal");
  jit.compile(p, {.head_dim = 64, .dtype = fp16, .arch = "sm_80"});
  EXPECT_EQ(jit.counters().compiles, 1u);
  Kernel again = jit.compile(p, {.head_dim = 64, .dtype = fp16, .arch = "sm_80"});
  EXPECT_EQ(jit.counters().compiles, 1u);
  EXPECT_EQ(jit.counters().memory_hits, 1u);
  EXPECT_EQ(again.entry_name(), "flexjit_fwd_causal_d64_fp16");
}

TEST(Compile, BlockSparseWalksTheList) {
  // BlockIndices[64, 64]: a 64-row query tile (inside one query block) and the block-list hooks.
  const Kernel k = engine().compile(example("topk_causal"), {.head_dim = 128, .arch = "sm_90a"});
  EXPECT_THAT(k.cuda_source(), HasSubstr("static constexpr bool kHasBlockList = true;"));
  EXPECT_THAT(k.cuda_source(), HasSubstr("static constexpr int kBlockListKv = 64;"));
  EXPECT_THAT(k.cuda_source(), HasSubstr("flexjit::FwdConfig<128, 64, 32, 4,"));
  const Kernel dense = engine().compile(example("causal"), {.head_dim = 128, .arch = "sm_90a"});
  EXPECT_THAT(dense.cuda_source(), HasSubstr("static constexpr bool kHasBlockList = false;"));
  EXPECT_THAT(dense.cuda_source(), HasSubstr("flexjit::FwdConfig<128, 128, 32, 4,"));
}

TEST(Compile, UnsupportedHeadDim) {
  const std::string e = error_of([] { engine().compile(example("causal"), {.head_dim = 72, .arch = "sm_90a"}); });
  EXPECT_THAT(e, HasSubstr("head dim 72 is not supported"));
}

TEST(Compile, UnsupportedDtype) {
  const std::string e = error_of([] { engine().compile(example("causal"), {.dtype = f32, .arch = "sm_90a"}); });
  EXPECT_THAT(e, HasSubstr("dtype f32 is not supported"));
}

TEST(Compile, UnsupportedArch) {
  const std::string e = error_of([] { engine().compile(example("causal"), {.arch = "sm_75"}); });
  EXPECT_THAT(e, HasSubstr("sm_75"));
}

}  // namespace
}  // namespace flexjit::test

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

TEST(Compile, BlockSparseIsNotSupportedYet) {
  const std::string e = error_of([] { engine().compile(example("topk_causal"), {.arch = "sm_90a"}); });
  EXPECT_THAT(e, HasSubstr("block-sparse programs are not supported by the sm80 kernel yet"));
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

// What a kernel exposes besides forward: the cubin NVRTC made, its PTX, the source generated
// without compiling, and whether a program needs a block mask.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(KernelOutput, CubinIsAnElfImage) {
  const std::vector<char> cubin = alibi_kernel().cubin();
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(std::string(cubin.data(), 4), "\x7f" "ELF");
}

TEST(KernelOutput, PtxIsTheKernelsText) {
  const Kernel& k = alibi_kernel();
  const std::string ptx = k.ptx();
  EXPECT_THAT(ptx, HasSubstr(".target sm_90a"));
  EXPECT_THAT(ptx, HasSubstr(".entry " + k.entry_name()));
  EXPECT_NE(ptx.back(), '\0');
  EXPECT_EQ(k.ptx(), ptx);  // kept: the second call compiles nothing
}

TEST(KernelOutput, GeneratedSourceIsWhatCompileCompiles) {
  const Program p = example("alibi_softcap_window");
  const CompileOptions options{.head_dim = 128, .dtype = bf16, .arch = "sm_90a"};
  const Kernel k = engine().compile(p, options);
  EXPECT_EQ(generate_cuda_source(p, options), k.cuda_source());
  EXPECT_EQ(generate_cuda_source(p, options, true), k.cuda_source(true));
  EXPECT_THROW(generate_cuda_source(p, {.dtype = f32, .device = Device::cpu()}), ArgumentError);
}

TEST(KernelOutput, GeneratedSourceIsTheTablesFirstTile) {
  // At D = 64 the sink window's mask spills in the table's 192-row tile, so compile settles on
  // 128 rows; generate_cuda_source, which compiles nothing, shows the first tile, and the kernel
  // what ran.
  const Program p = example("sink_window");
  const CompileOptions options{.head_dim = 64, .arch = "sm_90a"};
  EXPECT_THAT(generate_cuda_source(p, options), HasSubstr("flexjit::Sm90FwdConfig<64, 192, 128, 4,"));
  EXPECT_THAT(engine().compile(p, options).cuda_source(), HasSubstr("flexjit::Sm90FwdConfig<64, 128, 128, 4,"));
}

TEST(KernelOutput, ProgramsSayWhetherTheyNeedABlockMask) {
  EXPECT_TRUE(example("document").needs_block_mask());
  EXPECT_FALSE(example("causal").needs_block_mask());
  EXPECT_FALSE(example("alibi_softcap_window").needs_block_mask());
  EXPECT_EQ(alibi_kernel().needs_block_mask(), example("alibi_softcap_window").needs_block_mask());
}

}  // namespace
}  // namespace flexjit::test

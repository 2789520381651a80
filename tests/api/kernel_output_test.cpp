// What a kernel exposes besides forward: the cubin NVRTC made, its PTX, the source generated
// without compiling, and whether a program needs a block mask.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
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

// sin, cos and tan keep only their short path inline: the compiler folds the C functions' own
// test of the wide-argument bound against the ops' test (templates/common/dsl_ops.cuh), so the
// wide reduction, with its table, is in the out-of-line functions alone. Should a CUDA release
// move that bound, the reduction comes back into every element's code and compiles take seconds.
TEST(KernelOutput, TrigFunctionsReduceWideArgumentsOnlyOutOfLine) {
  const Program program = Program::from_source(
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return torch.sin(score) + torch.cos(score) * torch.tan(score * 0.01)\n",
      "trig.py");
  const Kernel k = engine().compile(program, {.head_dim = 64, .arch = "sm_80"});
  const std::string ptx = k.ptx();
  const std::size_t entry = ptx.find(".entry " + k.entry_name());
  ASSERT_NE(entry, std::string::npos) << ptx;
  const std::string entry_body = ptx.substr(entry, ptx.find("\n}", entry) - entry);
  EXPECT_THAT(entry_body, Not(HasSubstr("__cudart_i2opi_f")));
  for (const char* wide : {"sin_wide", "cos_wide", "tan_wide"}) EXPECT_THAT(ptx, HasSubstr(wide));
}

// Decode, backward and chunk are modules of their own: ptx(), cubin() and compile_report() of a
// pass compile it first where needed and speak of its main entry, family and tile.
TEST(KernelOutput, EachPassHasItsOwnModule) {
  const Kernel k = engine().compile(example("softcap"), {.head_dim = 64, .arch = "sm_90a", .backward_family = "sm90_bwd"});
  const std::string bwd = k.ptx(Kernel::Pass::backward);
  EXPECT_THAT(bwd, HasSubstr(".entry flexjit_bwd_softcap_d64_bf16("));
  EXPECT_THAT(bwd, HasSubstr("wgmma.mma_async"));
  EXPECT_THAT(bwd, Not(HasSubstr(".entry " + k.entry_name())));
  EXPECT_EQ(k.ptx(Kernel::Pass::backward), bwd);  // kept
  const Kernel::CompileReport report = k.compile_report(Kernel::Pass::backward);
  EXPECT_EQ(report.entry, "flexjit_bwd_softcap_d64_bf16");
  EXPECT_EQ(report.family, "sm90_bwd");
  EXPECT_EQ(report.tile.block_m, 64);
  EXPECT_EQ(report.tile.block_n, 128);
  EXPECT_GT(report.registers, 0);
  EXPECT_EQ(report.spill_bytes, 0);  // the soft-cap's slope fits beside the accumulators
  const std::vector<char> image = k.cubin(Kernel::Pass::backward);
  ASSERT_GT(image.size(), 4u);
  EXPECT_EQ(std::string(image.data(), 4), "\x7f" "ELF");
  EXPECT_NE(image, k.cubin());

  const Kernel::CompileReport decode = k.compile_report(Kernel::Pass::decode);
  EXPECT_EQ(decode.entry, "flexjit_decode_softcap_d64_bf16");
  EXPECT_EQ(decode.family, "decode");
  EXPECT_THAT(k.ptx(Kernel::Pass::decode), HasSubstr(".entry flexjit_decode_softcap_d64_bf16_combine("));
  const Kernel::CompileReport chunk = k.compile_report(Kernel::Pass::chunk);
  EXPECT_EQ(chunk.entry, "flexjit_chunk_softcap_d64_bf16");
  EXPECT_EQ(chunk.family, "sm90_chunk");
  EXPECT_EQ(chunk.spill_bytes, 0);
  EXPECT_THAT(k.ptx(Kernel::Pass::chunk), HasSubstr(".entry flexjit_chunk_softcap_d64_bf16("));
  EXPECT_THAT(k.cuda_source(), Not(HasSubstr("ChunkArgs")));
  const Kernel::CompileReport forward = k.compile_report();
  EXPECT_EQ(forward.entry, k.entry_name());
  EXPECT_EQ(forward.family, k.family());
  EXPECT_EQ(forward.tile.block_m, k.tile().block_m);
}

TEST(KernelOutput, APassThatCannotBeGeneratedSaysWhy) {
  const Kernel k = engine().compile(example("causal"), {.head_dim = 256, .arch = "sm_80"});
  try {
    k.compile_report(Kernel::Pass::backward);
    FAIL() << "a D = 256 backward compiled for sm_80";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("head dim 256 is above 128"));
  }
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

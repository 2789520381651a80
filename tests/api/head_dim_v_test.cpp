// A value head dim of its own (CompileOptions::head_dim_v: multi-head latent attention's 192 / 128
// in prefill): q and k of D columns, v, out, dout and dv of Dv. cpu kernels against the float64
// oracles, forward and backward, masks and score mods with captured tensors' gradients; the shapes
// a call gets wrong named; on CUDA the families that serve it, and the others' refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "api/program_impl.hpp"
#include "tests/api/absorbed_mla.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/api/backward_case.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

TEST(HeadDimV, ForwardMatchesTheOracle) {
  BackwardCase c("causal 24/16", example("causal"), {.B = 2, .Hq = 4, .Hkv = 2, .Tq = 37, .Tkv = 41, .D = 24, .Dv = 16});
  c.run();
  ReferenceInputs in{c.q.data(), c.k.data(), c.v.data(), 2, 4, 2, 37, 41, 24};
  in.scale = 1.0 / std::sqrt(24.0);
  in.Dv = 16;
  const ReferenceOutputs ref = reference_attention(detail::ProgramAccess::impl(c.program).ir, in);
  ASSERT_EQ(c.out.size(), ref.out.size());
  EXPECT_LT(relative_l2(c.out, ref.out), 1e-6);
}

TEST(HeadDimV, BackwardMatchesTheOracle) {
  BackwardCase causal("causal 24/16", example("causal"), {.B = 2, .Hq = 4, .Hkv = 2, .Tq = 37, .Tkv = 41, .D = 24, .Dv = 16});
  causal.run();
  expect_matches_reference(causal);
  // A wider v than q and k, a score mod whose captured slopes get a gradient, and a window.
  BackwardCase alibi("alibi softcap window 8/20", example("alibi_softcap_window"),
                     {.B = 1, .Hq = 4, .Hkv = 2, .Tq = 33, .Tkv = 33, .D = 8, .Dv = 20});
  alibi.bind_scalar("window", 12);
  alibi.bind_floats("alibi_slopes", {4}, {0.5f, 0.25f, 0.125f, 0.0625f}, true);
  alibi.run();
  expect_matches_reference(alibi);
}

// Multi-head latent attention's prefill head dims (q and k of 192, v of 128: what the Hopper
// backward's split form serves on CUDA) on the cpu kernels: a mask with GQA over 2 kv heads, and a
// score mod with a window whose slopes get a gradient, with every query head on one kv head.
TEST(HeadDimV, MlaBackwardMatchesTheOracle) {
  BackwardCase causal("causal 192/128", example("causal"),
                      {.B = 1, .Hq = 4, .Hkv = 2, .Tq = 19, .Tkv = 23, .D = 192, .Dv = 128});
  causal.run();
  expect_matches_reference(causal);
  BackwardCase alibi("alibi softcap window 192/128", example("alibi_softcap_window"),
                     {.B = 2, .Hq = 4, .Hkv = 1, .Tq = 17, .Tkv = 17, .D = 192, .Dv = 128});
  alibi.bind_scalar("window", 6);
  alibi.bind_floats("alibi_slopes", {4}, {0.5f, 0.25f, 0.125f, 0.0625f}, true);
  alibi.run();
  expect_matches_reference(alibi);
}

TEST(HeadDimV, ShapesOfTheOtherHeadDimAreNamed) {
  const Kernel k = engine().compile(example("causal"), {.head_dim = 24, .head_dim_v = 16, .dtype = f32, .device = Device::cpu()});
  EXPECT_EQ(k.head_dim(), 24);
  EXPECT_EQ(k.head_dim_v(), 16);
  std::vector<float> q(2 * 9 * 24), kk(2 * 9 * 24), v(2 * 9 * 24), out(2 * 9 * 16);
  const auto view = [](std::vector<float>& x, int d) {
    return TensorView::contiguous(x.data(), f32, {1, 2, 9, d}, Device::cpu());
  };
  try {
    k.forward(view(q, 24), view(kk, 24), view(v, 24), view(out, 16));  // v with q's head dim
    FAIL() << "v of head dim 24 was taken";
  } catch (const ArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("head dim 24 of v does not match the kernel's 16 (of v and out)"));
    EXPECT_THAT(e.what(), HasSubstr("v: expected the shape of k [1, 2, 9, 24] but for head dim 16, got [1, 2, 9, 24]"));
  }
}

// MLA's absorbed decode: one kv head of 576 columns (512 latent + 64 rope) in pages, and v the
// first 512 columns of the same pages, a view with k's strides (no copy); 16 query heads, a
// causal mask at each sequence's end, against the oracle on a materialised v.
TEST(HeadDimV, AbsorbedDecodeReadsVFromTheKeyPages) {
  const Kernel k = engine().compile(example("decode_causal"), {.head_dim = AbsorbedMlaDecode::D,
                                                               .head_dim_v = AbsorbedMlaDecode::Dv, .dtype = f32,
                                                               .device = Device::cpu()});
  AbsorbedMlaDecode mla(2, 16, 2, 5, {37, 16}, {4, 0, 2, 1, -1, -1}, 576);
  std::vector<std::int32_t> offsets = {35, 14};
  ForwardOptions o;
  o.bind["offsets"] = TensorView::contiguous(offsets.data(), i32, {2}, Device::cpu());
  mla.run(k, o);
  ir::Env env;
  env.tensors["offsets"] = ir::TensorBinding{ir::DType::Int32, {2}, {}, offsets.data()};
  const ReferenceOutputs ref = mla.reference(detail::ProgramAccess::impl(example("decode_causal")).ir, env);
  EXPECT_LT(relative_l2(mla.out, ref.out), 1e-6);
}

// On CUDA the forward takes v of its own head dim: sm90_fwd MLA's 192 / 128 on sm_90a, the
// mma.sync forward any Dv <= D (decode and the mma.sync backward refuse it by name), under an
// entry name of its own.
TEST(HeadDimV, CudaForwardOnBothForwardFamilies) {
  const Kernel k = engine().compile(example("causal"), {.head_dim = 192, .head_dim_v = 128, .arch = "sm_90a"});
  EXPECT_EQ(k.family(), "sm90_fwd");
  EXPECT_EQ(k.head_dim(), 192);
  EXPECT_EQ(k.head_dim_v(), 128);
  EXPECT_EQ(k.entry_name(), "flexjit_fwd_causal_d192v128_bf16");
  EXPECT_THAT(generate_cuda_source(example("causal"), {.head_dim = 192, .head_dim_v = 128, .arch = "sm_90a"}),
              HasSubstr("flexjit::Sm90FwdConfig<192, 128, 128, 2, flexjit::bf16_t, false, 128>"));
  EXPECT_THAT(generate_cuda_source(example("causal"),
                                   {.head_dim = 192, .head_dim_v = 128, .arch = "sm_90a", .family = "sm80_fwd"}),
              HasSubstr("flexjit::FwdConfig<192, 64, 32, 4, 2, flexjit::bf16_t, false, 2, 128>"));
  EXPECT_EQ(engine().compile(example("causal"), {.head_dim = 128, .head_dim_v = 64, .arch = "sm_90a"}).family(),
            "sm80_fwd")
      << "head dims the Hopper family does not serve take the mma.sync one";
  auto refusal = [](const CompileOptions& o) {
    try {
      engine().compile(example("causal"), o);
      return std::string("compiled");
    } catch (const UnsupportedError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_THAT(refusal({.head_dim = 128, .head_dim_v = 64, .arch = "sm_90a", .family = "sm90_fwd"}),
              HasSubstr("kernel family sm90_fwd cannot run the forward pass at head dim 128 (v: 64), bf16, sm_90a: head "
                        "dims 128 (q, k) and 64 (v): the value head dim differs only as 192 and 128"));
  EXPECT_THAT(refusal({.head_dim = 128, .head_dim_v = 192, .arch = "sm_90a"}),
              HasSubstr("sm80_fwd: v's head dim 192 is not a multiple of 16 between 16 and q and k's 128"));
  EXPECT_THAT(refusal({.head_dim = 64, .head_dim_v = -2, .arch = "sm_90a"}),
              HasSubstr("head dim -2 of v is not supported: it must be at least 1 (0: head_dim)"));
  try {
    // The backward on sm_80: the Hopper family's split form is sm_90a's (below).
    generate_backward_cuda_source(example("causal"), {.head_dim = 192, .head_dim_v = 128, .arch = "sm_80"});
    FAIL() << "sm80_bwd took head_dim_v";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("v's head dim 128 differs from q and k's 192: this family takes one head dim"));
  }
  // Decode: the decode_mla family.
  EXPECT_THAT(generate_decode_cuda_source(example("causal"), {.head_dim = 192, .head_dim_v = 128, .arch = "sm_90a"}),
              HasSubstr("flexjit::DecodeMlaConfig<192, 128, 3, true, flexjit::bf16_t>"));
  // The Hopper backward's split form, chosen on its own or named.
  for (const char* family : {"", "sm90_bwd"})
    EXPECT_THAT(generate_backward_cuda_source(example("causal"), {.head_dim = 192,
                                                                  .head_dim_v = 128,
                                                                  .arch = "sm_90a",
                                                                  .backward_family = family}),
                HasSubstr("flexjit::Sm90BwdSplitConfig<192, 128, 64, 64, 2, flexjit::bf16_t>"))
        << family;
  // The same head dim said twice is the ordinary kernel.
  EXPECT_EQ(engine().compile(example("causal"), {.head_dim = 64, .head_dim_v = 64, .arch = "sm_90a"}).head_dim_v(), 64);
}

}  // namespace
}  // namespace flexjit::test

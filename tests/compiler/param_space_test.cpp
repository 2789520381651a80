// Programs whose bound values cannot fit a CUDA kernel's parameters are refused while planning,
// at the declaration where the space runs out, with the count and the limit: never handed to
// NVRTC (2,000 captured tensors once took ptxas 270 s and 8 GB before it failed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "compiler/param_space.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/plan.hpp"
#include "dsl/diagnostics.hpp"

namespace flexjit::compiler {
namespace {

using ::testing::HasSubstr;

// `captures` rank-1 float tensors c0.. and `scalars` int scalars s0.., one per line, then a
// causal mask that reads the first tensor.
std::string program_text(int captures, int scalars) {
  std::string text;
  for (int i = 0; i < captures; ++i) text += "c" + std::to_string(i) + ": Tensor[float32, 1]\n";
  for (int i = 0; i < scalars; ++i) text += "s" + std::to_string(i) + ": int\n";
  text += "\ndef score_mod(score, b, h, q_idx, kv_idx):\n    return score + c0[kv_idx]\n";
  text += "\ndef mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n";
  return text;
}

// The error of planning `text` for the pass, or "" when it plans.
std::string plan_error(const std::string& text, KernelPass pass = KernelPass::Forward) {
  const dsl::SourceFile file("many.py", text);
  const ir::Program program = build_ir(file);
  KernelTarget target;
  target.arch = "sm_90a";
  target.pass = pass;
  try {
    make_plan(program, target, &file);
  } catch (const flexjit::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ParamSpace, TwoThousandTensorsAreRefusedAtTheOneThatDoesNotFit) {
  // 16 bytes a rank-1 tensor (pointer, stride): 1983 fit in the 31732 bytes left.
  const std::string e = plan_error(program_text(2000, 0));
  EXPECT_THAT(e, HasSubstr("many.py:1984:1: error: too many bound values for one CUDA kernel: the kernel's "
                           "parameters run out at 'c1983'; the program's 2000 captured tensors and 0 runtime "
                           "scalars take 32000 bytes, and a kernel's parameters hold 32764 bytes in all, 1032 of "
                           "them flexjit's own arguments"));
}

TEST(ParamSpace, TwentyThousandTensorsAndScalarsAreRefusedToo) {
  const std::string e = plan_error(program_text(20000, 20000));
  EXPECT_THAT(e, HasSubstr("the kernel's parameters run out at 'c1983'; the program's 20000 captured tensors and "
                           "20000 runtime scalars take 480000 bytes"));
}

TEST(ParamSpace, WhatFitsPlans) {
  EXPECT_EQ(plan_error(program_text(1983, 0)), "");
  // Scalars come after the tensors: 1980 x 16 bytes leave 52 (the call's two position offsets
  // take 8 of flexjit's own), room for six 8-byte ints.
  EXPECT_THAT(plan_error(program_text(1980, 10)),
              HasSubstr("many.py:1987:1: error: too many bound values for one CUDA kernel: the kernel's parameters "
                        "run out at 's6'"));
}

TEST(ParamSpace, TheBackwardCountsTheGradientsToo) {
  // c0 is read by score_mod, so the backward carries its gradient's pointer, extent and stride.
  const std::string fits_forward = program_text(1983, 0);
  EXPECT_EQ(plan_error(fits_forward), "");
  EXPECT_THAT(plan_error(fits_forward, KernelPass::Backward),
              HasSubstr("take 31728 bytes and their gradients' 24 more"));
}

}  // namespace
}  // namespace flexjit::compiler

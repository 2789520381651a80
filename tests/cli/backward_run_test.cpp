// `flexjit run ... --dout --dq --dk --dv --grad` as a process: .npy files in, the forward then the
// backward, .npy gradients out, compared with the float64 backward oracle of tests/support on the
// same inputs, on the cpu and (where there is a GPU) on cuda; and the refusals of the new flags
// (nothing is written when one is refused).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "api/program_impl.hpp"
#include "flexjit/flexjit.hpp"
#include "tests/support/reference_backward.hpp"
#include "tests/cli/cli_process.hpp"

namespace flexjit::test {
namespace {

using tools::test::temp_path;

constexpr int B = 2, Hq = 4, Hkv = 2, Tq = 9, Tkv = 13, D = 8, kWindow = 5;

struct Files {
  std::mt19937 rng{7};
  std::vector<float> q = normal(std::size_t{B} * Hq * Tq * D, rng), k = normal(std::size_t{B} * Hkv * Tkv * D, rng),
                     v = normal(k.size(), rng), dout = normal(q.size(), rng), slopes = {0.5f, -0.25f, 0.125f, 0.75f};
  std::string q_path = f32_npy("bq.npy", {B, Hq, Tq, D}, q), k_path = f32_npy("bk.npy", {B, Hkv, Tkv, D}, k),
              v_path = f32_npy("bv.npy", {B, Hkv, Tkv, D}, v), dout_path = f32_npy("bdo.npy", {B, Hq, Tq, D}, dout),
              slopes_path = f32_npy("bslopes.npy", {Hq}, slopes);
  std::string dq = temp_path("bdq.npy"), dk = temp_path("bdk.npy"), dv = temp_path("bdv.npy"),
              dslopes = temp_path("bdslopes.npy");

  Files() {
    for (const std::string& out : {dq, dk, dv, dslopes}) std::filesystem::remove(out);
  }
  // Everything but the backward's flags.
  std::string forward_args() const {
    return "examples/alibi_softcap_window.py --device cpu --q " + q_path + " --k " + k_path + " --v " + v_path +
           " --out " + temp_path("bout.npy") + " --bind window=" + std::to_string(kWindow) +
           " alibi_slopes=" + slopes_path;
  }
  std::string gradient_args() const {
    return " --dout " + dout_path + " --dq " + dq + " --dk " + dk + " --dv " + dv;
  }
};

TEST(CliBackward, GradientsMatchTheReference) {
  const Files f;
  const CliRun r = flexjit_run(f.forward_args() + f.gradient_args() + " --grad alibi_slopes=" + f.dslopes);
  ASSERT_EQ(r.status, 0) << r.output;

  const Program program = Program::from_file(std::string(FLEXJIT_SOURCE_DIR) + "/examples/alibi_softcap_window.py");
  ir::Env env;
  env.scalars["window"] = ir::Value::integer(kWindow);
  env.tensors["alibi_slopes"] = ir::TensorBinding{ir::DType::Float32, {Hq}, {}, f.slopes.data()};
  ReferenceInputs in{f.q.data(), f.k.data(), f.v.data(), B, Hq, Hkv, Tq, Tkv, D};
  in.scale = 1.0 / std::sqrt(static_cast<double>(D));
  in.env = &env;
  const ReferenceGradients ref = reference_backward(detail::ProgramAccess::impl(program).ir, in, f.dout.data());

  const tools::NpyArray dq = tools::read_npy(f.dq), dk = tools::read_npy(f.dk), dv = tools::read_npy(f.dv),
                        dslopes = tools::read_npy(f.dslopes);
  EXPECT_EQ(dq.shape, (std::vector<std::int64_t>{B, Hq, Tq, D}));
  EXPECT_EQ(dk.shape, (std::vector<std::int64_t>{B, Hkv, Tkv, D}));
  EXPECT_EQ(dv.shape, (std::vector<std::int64_t>{B, Hkv, Tkv, D}));
  EXPECT_EQ(dslopes.shape, (std::vector<std::int64_t>{Hq}));
  EXPECT_EQ(dq.dtype_str(), "float32");
  // Float32 results of float64 sums over float32 inputs (tests/api/backward_case.cpp has the
  // argument): a few 1e-7 relative, so 1e-5 catches any wrong term.
  EXPECT_LT(relative_l2(dq.to_float32(), ref.dq), 1e-5);
  EXPECT_LT(relative_l2(dk.to_float32(), ref.dk), 1e-5);
  EXPECT_LT(relative_l2(dv.to_float32(), ref.dv), 1e-5);
  EXPECT_LT(relative_l2(dslopes.to_float32(), ref.captures.at("alibi_slopes")), 1e-5);
}

TEST(CliBackward, FlagsAreRefusedAndNothingIsWritten) {
  const Files f;
  CliRun r = flexjit_run(f.forward_args() + " --dout " + f.dout_path + " --dq " + f.dq);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--dout requires --dk"), std::string::npos) << r.output;

  r = flexjit_run(f.forward_args() + " --dq " + f.dq);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--dq requires --dout"), std::string::npos) << r.output;

  r = flexjit_run(f.forward_args() + " --dout " + f.dout_path + " --dq " + f.dq + " --dk " + f.dk + " --dv " + f.dq);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--dv '" + f.dq + "' is the same file as --dq '" + f.dq + "'; nothing was written"),
            std::string::npos)
      << r.output;

  r = flexjit_run(f.forward_args() + f.gradient_args() + " --grad alibi_slopes=" + f.q_path);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--grad alibi_slopes '" + f.q_path + "' is the same file as --q '" + f.q_path + "'"),
            std::string::npos)
      << r.output;

  r = flexjit_run(f.forward_args() + f.gradient_args() + " --grad window=" + f.dslopes);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("flexjit: error: flexjit_cpu_alibi_softcap_window_d8_f32: grads: 'window' is a scalar int: "
                          "only float tensors read by score_mod or sink have gradients"),
            std::string::npos)
      << r.output;

  const std::string short_dout =
      f32_npy("bdo_short.npy", {B, Hq, Tq - 1, D}, std::vector<float>(std::size_t{B} * Hq * (Tq - 1) * D));
  r = flexjit_run(f.forward_args() + " --dout " + short_dout + " --dq " + f.dq + " --dk " + f.dk + " --dv " + f.dv);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--dout " + short_dout + ": expected the shape of out (2, 4, 9, 8), got (2, 4, 8, 8)"),
            std::string::npos)
      << r.output;

  // Without a GPU, gradients on cuda fail as the forward alone does (the same message, nothing
  // written); tests/cli/CMakeLists.txt runs CliBackward.CudaGradientsMatchTheReference on a GPU.
  if (const CudaAvailability cuda = cuda_availability(); cuda.devices == 0) {
    const std::string x16 = f32_npy("bx16.npy", {1, 1, 4, 16}, std::vector<float>(64, 0.5f));
    const std::string forward = "examples/causal.py --device cuda --q " + x16 + " --k " + x16 + " --v " + x16 +
                                " --out " + temp_path("bout16.npy");
    const CliRun alone = flexjit_run(forward);
    r = flexjit_run(forward + " --dout " + x16 + " --dq " + f.dq + " --dk " + f.dk + " --dv " + f.dv);
    EXPECT_EQ(alone.status, 2) << alone.output;
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output, alone.output);
    if (cuda.reason.starts_with("CUDA driver")) {  // not found, too old, or cuInit failed
      EXPECT_EQ(r.output, "flexjit: error: " + cuda.reason + "\n");
    }
  }

  for (const std::string& out : {f.dq, f.dk, f.dv, f.dslopes}) EXPECT_FALSE(std::filesystem::exists(out)) << out;
}

// On a GPU: the forward and the backward on the CUDA kernels (GQA, a window mask, the ALiBi
// slopes' gradient), against the float64 oracle on the inputs rounded to the kernel's dtype, as
// the command line rounds them. Skipped without a GPU.
TEST(CliBackward, CudaGradientsMatchTheReference) {
  if (cuda_availability().devices == 0) GTEST_SKIP() << "no CUDA device";
  constexpr int b = 2, hq = 4, hkv = 2, tq = 70, tkv = 100, d = 64, window = 40;
  for (const DType dtype : {DType::bf16, DType::fp16}) {
    const std::string name = dtype_name(dtype);
    std::mt19937 rng{11};
    std::vector<float> q = normal(std::size_t{b} * hq * tq * d, rng), k = normal(std::size_t{b} * hkv * tkv * d, rng),
                       v = normal(k.size(), rng), dout = normal(q.size(), rng), slopes = {0.5f, -0.25f, 0.125f, 0.75f};
    const auto round = [&](float x) {
      return dtype == DType::bf16 ? bf16_bits_to_float(float_to_bf16_bits(x)) : fp16_bits_to_float(float_to_fp16_bits(x));
    };
    for (std::vector<float>* x : {&q, &k, &v, &dout})
      for (float& e : *x) e = round(e);
    const std::string dq = temp_path("cdq.npy"), dk = temp_path("cdk.npy"), dv = temp_path("cdv.npy"),
                      dslopes = temp_path("cdslopes.npy");
    const CliRun r = flexjit_run(
        "examples/alibi_softcap_window.py --device cuda --dtype " + name + " --q " + f32_npy("cq.npy", {b, hq, tq, d}, q) +
        " --k " + f32_npy("ck.npy", {b, hkv, tkv, d}, k) + " --v " + f32_npy("cv.npy", {b, hkv, tkv, d}, v) +
        " --out " + temp_path("cout.npy") + " --bind window=" + std::to_string(window) +
        " alibi_slopes=" + f32_npy("cslopes.npy", {hq}, slopes) + " --dout " + f32_npy("cdo.npy", {b, hq, tq, d}, dout) +
        " --dq " + dq + " --dk " + dk + " --dv " + dv + " --grad alibi_slopes=" + dslopes);
    ASSERT_EQ(r.status, 0) << name << ": " << r.output;

    const Program program = Program::from_file(std::string(FLEXJIT_SOURCE_DIR) + "/examples/alibi_softcap_window.py");
    ir::Env env;
    env.scalars["window"] = ir::Value::integer(window);
    env.tensors["alibi_slopes"] = ir::TensorBinding{ir::DType::Float32, {hq}, {}, slopes.data()};
    ReferenceInputs in{q.data(), k.data(), v.data(), b, hq, hkv, tq, tkv, d};
    in.scale = 1.0 / std::sqrt(static_cast<double>(d));
    in.env = &env;
    const ReferenceGradients ref = reference_backward(detail::ProgramAccess::impl(program).ir, in, dout.data());

    const tools::NpyArray got_dq = tools::read_npy(dq), got_dk = tools::read_npy(dk), got_dv = tools::read_npy(dv),
                          got_dslopes = tools::read_npy(dslopes);
    EXPECT_EQ(got_dq.shape, (std::vector<std::int64_t>{b, hq, tq, d})) << name;
    EXPECT_EQ(got_dk.shape, (std::vector<std::int64_t>{b, hkv, tkv, d})) << name;
    EXPECT_EQ(got_dslopes.shape, (std::vector<std::int64_t>{hq})) << name;
    // float32 files holding the kernel dtype's values, as --out on the GPU.
    EXPECT_EQ(got_dq.dtype_str(), "float32") << name;
    std::size_t unrounded = 0;
    for (const float x : got_dq.to_float32()) unrounded += round(x) != x;
    EXPECT_EQ(unrounded, 0u) << name;
    // The kernel's dtype: out and each gradient rounded once (relative 2^-9 for bf16, 2^-12 for
    // fp16), fp32 sums in between; an H200 gave 2.7e-3 (bf16) and 3.5e-4 (fp16) at most, and a
    // wrong term is off by far more.
    const double bound = dtype == DType::bf16 ? 1e-2 : 3e-3;
    const double e_dq = relative_l2(got_dq.to_float32(), ref.dq), e_dk = relative_l2(got_dk.to_float32(), ref.dk),
                 e_dv = relative_l2(got_dv.to_float32(), ref.dv),
                 e_dslopes = relative_l2(got_dslopes.to_float32(), ref.captures.at("alibi_slopes"));
    EXPECT_LT(e_dq, bound) << name;
    EXPECT_LT(e_dk, bound) << name;
    EXPECT_LT(e_dv, bound) << name;
    EXPECT_LT(e_dslopes, bound) << name;
    std::printf("[figures] flexjit run --dout, cuda %s: dq=%.3e dk=%.3e dv=%.3e dalibi_slopes=%.3e\n", name.c_str(),
                e_dq, e_dk, e_dv, e_dslopes);
  }
}

}  // namespace
}  // namespace flexjit::test

// `flexjit run ... --dout --dq --dk --dv --grad` as a process: .npy files in, the forward then the
// backward, .npy gradients out, compared with the float64 backward oracle of tests/support on the
// same inputs; and the refusals of the new flags (nothing is written when one is refused).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
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

std::string f32_npy(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
  return write_npy(name, "<f4", shape, values);
}

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
  EXPECT_NE(r.output.find("--dout " + short_dout + ": expected the shape of q (2, 4, 9, 8), got (2, 4, 8, 8)"),
            std::string::npos)
      << r.output;

  // The CUDA kernels have no backward yet: refused before the forward runs (head dim 16, which
  // a CUDA kernel takes).
  const std::string x16 = f32_npy("bx16.npy", {1, 1, 4, 16}, std::vector<float>(64, 0.5f));
  r = flexjit_run("examples/causal.py --device cuda --q " + x16 + " --k " + x16 + " --v " + x16 + " --out " +
                  temp_path("bout16.npy") + " --dout " + x16 + " --dq " + f.dq + " --dk " + f.dk + " --dv " + f.dv);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("the backward runs on cpu kernels only for now"), std::string::npos) << r.output;

  for (const std::string& out : {f.dq, f.dk, f.dv, f.dslopes}) EXPECT_FALSE(std::filesystem::exists(out)) << out;
}

}  // namespace
}  // namespace flexjit::test

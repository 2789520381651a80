// `flexjit run --dtype fp8` on the cpu as a process: float32 .npy inputs converted to FP8 E4M3
// (saturating), out in bf16 written as float32, against the float64 oracle on the e4m3 values;
// --demo's report; and the refusals (a KV cache, the backward).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "api/program_impl.hpp"
#include "flexjit/flexjit.hpp"
#include "flexjit/fp8.hpp"
#include "tests/cli/cli_process.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

using tools::test::temp_path;

constexpr int B = 2, Hq = 4, Hkv = 2, Tq = 9, Tkv = 13, D = 16, kWindow = 5;

// What the kernel reads of x: each value's nearest e4m3 value (448 past the largest).
std::vector<float> as_e4m3(std::vector<float> x) {
  for (float& e : x) e = e4m3_bits_to_float(float_to_e4m3_bits(e));
  return x;
}

TEST(CliFp8Run, ForwardMatchesTheReferenceOnTheE4m3Values) {
  std::mt19937 rng(23);
  std::vector<float> q = normal(std::size_t{B} * Hq * Tq * D, rng), k = normal(std::size_t{B} * Hkv * Tkv * D, rng),
                     v = normal(std::size_t{B} * Hkv * Tkv * D, rng);
  for (float& e : q) e *= 3.0f;  // values between the codes of several binades
  q[0] = 1000.0f;                // saturates to 448
  const std::string out = temp_path("fp8_out.npy"), lse = temp_path("fp8_lse.npy");
  const CliRun r = flexjit_run("examples/sliding_window.py --device cpu --dtype fp8 --bind window=" +
                               std::to_string(kWindow) + " --q " + f32_npy("fp8_q.npy", {B, Hq, Tq, D}, q) + " --k " +
                               f32_npy("fp8_k.npy", {B, Hkv, Tkv, D}, k) + " --v " +
                               f32_npy("fp8_v.npy", {B, Hkv, Tkv, D}, v) + " --out " + out + " --lse " + lse);
  ASSERT_EQ(r.status, 0) << r.output;

  const std::vector<float> q8 = as_e4m3(q), k8 = as_e4m3(k), v8 = as_e4m3(v);
  ASSERT_EQ(q8[0], 448.0f);
  const Program program = Program::from_file(std::string(FLEXJIT_SOURCE_DIR) + "/examples/sliding_window.py");
  ir::Env env;
  env.scalars["window"] = ir::Value::integer(kWindow);
  ReferenceInputs in{q8.data(), k8.data(), v8.data(), B, Hq, Hkv, Tq, Tkv, D};
  in.scale = 1.0 / std::sqrt(static_cast<double>(D));
  in.env = &env;
  const ReferenceOutputs ref = reference_attention(detail::ProgramAccess::impl(program).ir, in);

  const tools::NpyArray got_out = tools::read_npy(out), got_lse = tools::read_npy(lse);
  EXPECT_EQ(got_out.shape, (std::vector<std::int64_t>{B, Hq, Tq, D}));
  const std::vector<float> o = got_out.to_float32();
  // out is bf16: every element within its rounding (2^-8 relative) of the reference.
  for (std::size_t i = 0; i < o.size(); ++i)
    ASSERT_LE(std::fabs(o[i] - ref.out[i]), 4e-3 * std::fabs(ref.out[i]) + 1e-6) << "element " << i;
  EXPECT_LT(relative_l2(got_lse.to_float32(), ref.lse), 1e-5);
}

TEST(CliFp8Run, DemoReportsTheFp8Run) {
  const CliRun r = flexjit_run("examples/causal.py --demo --device cpu --dtype fp8 --B 1 --H 4 --Hkv 2 --T 40 --D 16");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("B=1 Hq=4 Hkv=2 Tq=40 Tkv=40 D=16, fp8_e4m3 (out bf16)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the IR interpreter in float32 on the same fp8_e4m3 values"), std::string::npos) << r.output;
  const std::size_t at = r.output.find("rel L2 error");
  ASSERT_NE(at, std::string::npos) << r.output;
  const double error = std::stod(r.output.substr(at + 12));
  EXPECT_GT(error, 0.0);  // out was rounded to bf16...
  EXPECT_LT(error, 4e-3);  // ...and no more
}

TEST(CliFp8Run, KvCacheAndBackwardAreRefused) {
  std::mt19937 rng(3);
  const std::string q = f32_npy("fp8_rq.npy", {1, 2, 4, 16}, normal(128, rng)),
                    k = f32_npy("fp8_rk.npy", {1, 2, 4, 16}, normal(128, rng)),
                    lens = write_npy("fp8_lens.npy", "<i4", {1}, std::vector<std::int32_t>{3}),
                    out = temp_path("fp8_rout.npy");
  const std::string refusal =
      "--dtype fp8: fp8_e4m3 kernels run the forward without a KV cache only; drop --kv-lens and --dout, or use bf16 "
      "or fp16";
  CliRun r = flexjit_run("examples/causal.py --device cpu --dtype fp8 --q " + q + " --k " + k + " --v " + k +
                         " --kv-lens " + lens + " --out " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(refusal), std::string::npos) << r.output;
  r = flexjit_run("examples/causal.py --device cpu --dtype fp8_e4m3 --q " + q + " --k " + k + " --v " + k + " --out " +
                  out + " --dout " + q + " --dq " + temp_path("fp8_dq.npy") + " --dk " + temp_path("fp8_dk.npy") +
                  " --dv " + temp_path("fp8_dv.npy"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(refusal), std::string::npos) << r.output;
}

}  // namespace
}  // namespace flexjit::test

// `flexjit run` with a value head dim of its own (v [B, Hkv, Tkv, Dv], out and dout [B, Hq, Tq, Dv],
// MLA's shapes) as a process: the forward and the backward on the cpu against the float64 oracles,
// --demo's --Dv, `emit` of the CUDA forward (sm80_fwd), and the refusals (a v that disagrees
// elsewhere, the CUDA decode family and the backward off sm_90a, which take one head dim).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "api/program_impl.hpp"
#include "flexjit/flexjit.hpp"
#include "tests/cli/cli_process.hpp"
#include "tests/support/reference_backward.hpp"

namespace flexjit::test {
namespace {

using tools::test::temp_path;

constexpr int B = 2, Hq = 4, Hkv = 2, Tq = 7, Tkv = 11, D = 16, Dv = 8, kWindow = 4;

TEST(CliHeadDimV, ForwardAndBackwardMatchTheReference) {
  std::mt19937 rng(11);
  const std::vector<float> q = normal(std::size_t{B} * Hq * Tq * D, rng), k = normal(std::size_t{B} * Hkv * Tkv * D, rng),
                           v = normal(std::size_t{B} * Hkv * Tkv * Dv, rng), dout = normal(std::size_t{B} * Hq * Tq * Dv, rng);
  const std::string out = temp_path("mla_out.npy"), lse = temp_path("mla_lse.npy"), dq = temp_path("mla_dq.npy"),
                    dk = temp_path("mla_dk.npy"), dv = temp_path("mla_dv.npy");
  const CliRun r = flexjit_run(
      "examples/sliding_window.py --device cpu --bind window=" + std::to_string(kWindow) + " --q " +
      f32_npy("mla_q.npy", {B, Hq, Tq, D}, q) + " --k " + f32_npy("mla_k.npy", {B, Hkv, Tkv, D}, k) + " --v " +
      f32_npy("mla_v.npy", {B, Hkv, Tkv, Dv}, v) + " --out " + out + " --lse " + lse + " --dout " +
      f32_npy("mla_dout.npy", {B, Hq, Tq, Dv}, dout) + " --dq " + dq + " --dk " + dk + " --dv " + dv);
  ASSERT_EQ(r.status, 0) << r.output;

  const Program program = Program::from_file(std::string(FLEXJIT_SOURCE_DIR) + "/examples/sliding_window.py");
  ir::Env env;
  env.scalars["window"] = ir::Value::integer(kWindow);
  ReferenceInputs in{q.data(), k.data(), v.data(), B, Hq, Hkv, Tq, Tkv, D};
  in.Dv = Dv;
  in.scale = 1.0 / std::sqrt(static_cast<double>(D));  // the scale follows q and k's head dim
  in.env = &env;
  const ir::Program& ir = detail::ProgramAccess::impl(program).ir;
  const ReferenceOutputs forward = reference_attention(ir, in);
  const ReferenceGradients grads = reference_backward(ir, in, dout.data());

  const tools::NpyArray got_out = tools::read_npy(out), got_dq = tools::read_npy(dq), got_dk = tools::read_npy(dk),
                        got_dv = tools::read_npy(dv);
  EXPECT_EQ(got_out.shape, (std::vector<std::int64_t>{B, Hq, Tq, Dv}));
  EXPECT_EQ(got_dq.shape, (std::vector<std::int64_t>{B, Hq, Tq, D}));
  EXPECT_EQ(got_dk.shape, (std::vector<std::int64_t>{B, Hkv, Tkv, D}));
  EXPECT_EQ(got_dv.shape, (std::vector<std::int64_t>{B, Hkv, Tkv, Dv}));
  // Float32 results of float64 sums over float32 inputs: a few 1e-7 relative.
  EXPECT_LT(relative_l2(got_out.to_float32(), forward.out), 1e-5);
  EXPECT_LT(relative_l2(got_dq.to_float32(), grads.dq), 1e-5);
  EXPECT_LT(relative_l2(got_dk.to_float32(), grads.dk), 1e-5);
  EXPECT_LT(relative_l2(got_dv.to_float32(), grads.dv), 1e-5);
}

TEST(CliHeadDimV, DemoTakesTheValueHeadDim) {
  const CliRun r = flexjit_run("examples/causal.py --demo --device cpu --B 1 --H 2 --T 33 --D 24 --Dv 8");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("B=1 Hq=2 Hkv=2 Tq=33 Tkv=33 D=24 Dv=8, float32"), std::string::npos) << r.output;
}

TEST(CliHeadDimV, RefusalsNameTheProblem) {
  std::mt19937 rng(5);
  const std::string q = f32_npy("mla_rq.npy", {1, 2, 4, 16}, normal(128, rng)),
                    k = f32_npy("mla_rk.npy", {1, 2, 4, 16}, normal(128, rng)),
                    v_short = f32_npy("mla_rv.npy", {1, 2, 3, 8}, normal(48, rng)),
                    v = f32_npy("mla_v8.npy", {1, 2, 4, 8}, normal(64, rng)), out = temp_path("mla_rout.npy");
  CliRun r = flexjit_run("examples/causal.py --device cpu --q " + q + " --k " + k + " --v " + v_short + " --out " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--k and --v: shapes (1, 2, 4, 16) and (1, 2, 3, 8) differ before the last dim (v's head "
                          "dim may differ)"),
            std::string::npos)
      << r.output;

  // A dout of q's shape where out has Dv columns.
  r = flexjit_run("examples/causal.py --device cpu --q " + q + " --k " + k + " --v " + v + " --out " + out + " --dout " +
                  q + " --dq " + temp_path("mla_rdq.npy") + " --dk " + temp_path("mla_rdk.npy") + " --dv " +
                  temp_path("mla_rdv.npy"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("expected the shape of out (1, 2, 4, 8), got (1, 2, 4, 16)"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));

  // On CUDA the forward families, the Hopper backward and decode_mla take Dqk != Dv (192 / 128 on
  // sm_90a): the backward's on sm_80 is refused by name.
  const std::string refusal = "v's head dim 128 differs from q and k's 192: this family takes one head dim";
  for (const char* command : {"emit ptx --backward --arch sm_80"}) {
    const std::string log = temp_path("mla_emit.log");
    const std::string line = std::string("cd '") + FLEXJIT_SOURCE_DIR + "' && '" + FLEXJIT_CLI + "' " + command +
                             " examples/causal.py --head-dim 192 --head-dim-v 128 > '" + log + "' 2>&1";
    const int raw = std::system(line.c_str());
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) != 0) << command;
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(refusal), std::string::npos) << command << ": " << text;
  }
  const std::string log = temp_path("mla_emit_forward.log");
  const int raw = std::system((std::string("cd '") + FLEXJIT_SOURCE_DIR + "' && '" + FLEXJIT_CLI +
                               "' emit cuda examples/causal.py --head-dim 192 --head-dim-v 128 > '" + log + "' 2>&1")
                                  .c_str());
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("// Forward attention, head dim 192 (v and out: 128), bf16, sm_90a; sm90_fwd family"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace flexjit::test

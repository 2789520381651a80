// A rank-0 captured tensor read as a number (`offset: Tensor[int64, 0]`, what a mod capturing
// `offset = torch.tensor(5)` becomes when its value changes per call): in arithmetic, through
// .item(), int(), float(), .to(dtype), in every mod. Each program has a twin that declares runtime
// scalars of the same values instead; both must give the same mods everywhere, and CPU attention
// (interpreter and LLVM) must match the float64 reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "attention_problem.hpp"
#include "compiler/pipeline.hpp"
#include "dsl/source.hpp"
#include "test_support.hpp"

namespace {

using namespace flexjit;
using namespace cpu_test;
using cpu::CpuBackend;

const char* const kTensors =
    "offset: Tensor[int64, 0]\n"
    "temperature: Tensor[float32, 0]\n"
    "causal: Tensor[bool, 0]\n"
    "\n"
    "def mask_mod(b, h, q_idx, kv_idx):\n"
    "    near = q_idx - kv_idx < offset.item() * 4\n"
    "    return (q_idx + offset >= kv_idx or not causal) and near\n"
    "\n"
    "def score_mod(score, b, h, q_idx, kv_idx):\n"
    "    shift = int(offset) % 3 + offset.to(torch.float32) / 8\n"
    "    return score / temperature + float(offset) * 0.01 - shift * (kv_idx % 2)\n"
    "\n"
    "def sink(b, h):\n"
    "    return temperature.item() - h if causal else -temperature\n";

const char* const kScalars =
    "offset: int\n"
    "temperature: float\n"
    "causal: bool\n"
    "\n"
    "def mask_mod(b, h, q_idx, kv_idx):\n"
    "    near = q_idx - kv_idx < offset * 4\n"
    "    return (q_idx + offset >= kv_idx or not causal) and near\n"
    "\n"
    "def score_mod(score, b, h, q_idx, kv_idx):\n"
    "    shift = offset % 3 + float(offset) / 8\n"
    "    return score / temperature + float(offset) * 0.01 - shift * (kv_idx % 2)\n"
    "\n"
    "def sink(b, h):\n"
    "    return temperature - h if causal else -temperature\n";

ir::Program compile(const char* text) { return compiler::build_ir(dsl::SourceFile("rank0.py", text)); }

// The tensors' elements, and the same values as runtime scalars.
struct Values {
  std::int64_t offset;
  float temperature;
  std::uint8_t causal;
  ir::Env tensors, scalars;

  Values(std::int64_t o, float t, bool c) : offset(o), temperature(t), causal(c ? 1 : 0) {
    tensors.tensors["offset"] = {ir::DType::Int64, {}, {}, &offset};
    tensors.tensors["temperature"] = {ir::DType::Float32, {}, {}, &temperature};
    tensors.tensors["causal"] = {ir::DType::Bool, {}, {}, &causal};
    scalars.scalars["offset"] = ir::Value::integer(o);
    scalars.scalars["temperature"] = ir::Value::real(t);
    scalars.scalars["causal"] = ir::Value::boolean(c);
  }
  Values(const Values&) = delete;
};

TEST(RankZeroCapture, ReadsAsTheScalarOfItsValue) {
  const ir::Program read = compile(kTensors), twin = compile(kScalars);
  ASSERT_EQ(read.captures.size(), 3u);
  EXPECT_TRUE(read.scalars.empty());
  for (auto [offset, temperature, causal] : {std::tuple{5, 0.5f, true}, std::tuple{-3, 2.0f, false}, std::tuple{40, 1.25f, true}}) {
    const Values v(offset, temperature, causal);
    for (int h = 0; h < 3; ++h) {
      EXPECT_EQ(ir::eval_sink(read, v.tensors, 0, h), ir::eval_sink(twin, v.scalars, 0, h));
      for (int q = 0; q < 40; q += 3)
        for (int kv = 0; kv < 50; kv += 2) {
          ASSERT_EQ(ir::eval_mask(read, v.tensors, 0, h, q, kv), ir::eval_mask(twin, v.scalars, 0, h, q, kv))
              << "offset " << offset << " q_idx " << q << " kv_idx " << kv;
          EXPECT_EQ(ir::eval_score(read, v.tensors, 0, h, q, kv, 0.75f), ir::eval_score(twin, v.scalars, 0, h, q, kv, 0.75f))
              << "offset " << offset << " q_idx " << q << " kv_idx " << kv;
        }
    }
  }
}

TEST(RankZeroCapture, CpuAttentionMatchesTheReference) {
  const ir::Program p = compile(kTensors);
  std::mt19937_64 rng(23);
  for (auto [offset, temperature, causal] : {std::tuple{5, 0.5f, true}, std::tuple{2, 3.0f, false}}) {
    const Values v(offset, temperature, causal);
    const Problem pb({2, 4, 2, 37, 45, 16}, &v.tensors, rng);
    const Output interpreted = pb.run(p, CpuBackend::Interpreter);
    expect_matches_reference(p, pb, interpreted);
    if (!cpu::llvm_backend_available()) continue;
    const Output compiled = pb.run(p, CpuBackend::Llvm);
    expect_matches_reference(p, pb, compiled);
    expect_identical(interpreted, compiled);
  }
}

}  // namespace

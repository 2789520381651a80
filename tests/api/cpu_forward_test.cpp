// Kernels compiled for Device::cpu(): forward runs the program on the host back end with the
// same arguments as the CUDA forward (host tensors), checked the same way, and matches the
// float64 reference of tests/cpu.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "api/program_impl.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

constexpr int B = 2, Hq = 4, Hkv = 2, T = 40, D = 16;

std::vector<float> normal(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> x(n);
  for (float& e : x) e = dist(rng);
  return x;
}

struct HostAttention {
  std::vector<float> q = normal(std::size_t{B} * Hq * T * D, 1), k = normal(std::size_t{B} * Hkv * T * D, 2),
                     v = normal(std::size_t{B} * Hkv * T * D, 3);
  std::vector<float> out = std::vector<float>(q.size()), lse = std::vector<float>(std::size_t{B} * Hq * T);

  TensorView view(const std::vector<float>& x, int H) const {
    return TensorView::contiguous(x.data(), f32, {B, H, T, D}, Device::cpu());
  }
  TensorView out_view() { return TensorView::contiguous(out.data(), f32, {B, Hq, T, D}, Device::cpu()); }
  TensorView lse_view() { return TensorView::contiguous(lse.data(), f32, {B, Hq, T}, Device::cpu()); }

  // The float64 reference on these inputs.
  test::ReferenceOutputs reference(const Program& p, const ir::Env& env = {}) const {
    test::ReferenceInputs in{q.data(), k.data(), v.data(), B, Hq, Hkv, T, T, D};
    in.scale = 1.0 / std::sqrt(static_cast<double>(D));
    in.env = &env;
    return test::reference_attention(detail::ProgramAccess::impl(p).ir, in);
  }
};

Kernel cpu_kernel(const std::string& example_name, DType dtype = f32, CpuBackend backend = CpuBackend::automatic) {
  return engine().compile(example(example_name),
                          {.head_dim = D, .dtype = dtype, .device = Device::cpu(), .cpu_backend = backend});
}

TEST(CpuForward, CausalMatchesTheReference) {
  const Kernel k = cpu_kernel("causal");
  EXPECT_EQ(k.device(), Device::cpu());
  EXPECT_EQ(k.entry_name(), "flexjit_cpu_causal_d16_f32");
  EXPECT_EQ(k.head_dim(), D);
  EXPECT_EQ(k.dtype(), f32);
  EXPECT_EQ(k.arch(), "");
  EXPECT_NE(k.cpu_backend(), CpuBackend::automatic);
  HostAttention a;
  k.forward(a.view(a.q, Hq), a.view(a.k, Hkv), a.view(a.v, Hkv), a.out_view(), {.lse = a.lse_view()});
  const test::ReferenceOutputs ref = a.reference(example("causal"));
  EXPECT_LT(test::relative_l2(a.out, ref.out), 1e-6);
  EXPECT_LT(test::relative_l2(a.lse, ref.lse), 1e-6);
  // The first query row sees only itself: its output is its own value row.
  for (int d = 0; d < D; ++d) EXPECT_EQ(a.out[static_cast<std::size_t>(d)], a.v[static_cast<std::size_t>(d)]);
}

TEST(CpuForward, BackEndsAgree) {
  HostAttention llvm, interpreted;
  const std::vector<float> slopes{0.5f, 0.25f, 0.125f, 0.0625f};
  const ForwardOptions bound{
      .bind = {{"window", 8}, {"alibi_slopes", TensorView::contiguous(slopes.data(), f32, {4}, Device::cpu())}}};
  const Kernel a = cpu_kernel("alibi_softcap_window", f32, CpuBackend::interpreter);
  EXPECT_EQ(a.cpu_backend(), CpuBackend::interpreter);
  a.forward(interpreted.view(interpreted.q, Hq), interpreted.view(interpreted.k, Hkv),
            interpreted.view(interpreted.v, Hkv), interpreted.out_view(), bound);
  const Kernel b = cpu_kernel("alibi_softcap_window");
  b.forward(llvm.view(llvm.q, Hq), llvm.view(llvm.k, Hkv), llvm.view(llvm.v, Hkv), llvm.out_view(), bound);
  EXPECT_EQ(llvm.out, interpreted.out);  // the back ends compute the mods bit for bit alike
}

TEST(CpuForward, SixteenBitAndStridedTensors) {
  // q, k, v, out in bf16, laid out [B, T, H, D] and viewed as [B, H, T, D] by their strides.
  HostAttention a;
  auto to_bf16_bthd = [](std::vector<float>& x, int H) {
    std::vector<std::uint16_t> bits(x.size());
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t)
          for (int d = 0; d < D; ++d) {
            float& e = x[((static_cast<std::size_t>(b) * H + h) * T + t) * D + d];
            e = bf16_bits_to_float(float_to_bf16_bits(e));  // the reference sees the rounded value
            bits[((static_cast<std::size_t>(b) * T + t) * H + h) * D + d] = float_to_bf16_bits(e);
          }
    return bits;
  };
  auto bthd = [](const void* data, int H) {
    return TensorView{const_cast<void*>(data), bf16, {B, H, T, D}, {std::int64_t{T} * H * D, D, std::int64_t{H} * D, 1},
                      Device::cpu()};
  };
  const auto q = to_bf16_bthd(a.q, Hq), k = to_bf16_bthd(a.k, Hkv), v = to_bf16_bthd(a.v, Hkv);
  std::vector<std::uint16_t> out(q.size());
  cpu_kernel("causal", bf16).forward(bthd(q.data(), Hq), bthd(k.data(), Hkv), bthd(v.data(), Hkv),
                                     bthd(out.data(), Hq), {.lse = a.lse_view()});
  const test::ReferenceOutputs ref = a.reference(example("causal"));
  std::vector<float> got(out.size());
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h)
      for (int t = 0; t < T; ++t)
        for (int d = 0; d < D; ++d)
          got[((static_cast<std::size_t>(b) * Hq + h) * T + t) * D + d] =
              bf16_bits_to_float(out[((static_cast<std::size_t>(b) * T + t) * Hq + h) * D + d]);
  EXPECT_LT(test::relative_l2(got, ref.out), 8e-3);  // bf16 rounding of the output only
  EXPECT_LT(test::relative_l2(a.lse, ref.lse), 1e-6);
}

TEST(CpuForward, ArgumentsAreCheckedLikeTheCudaForward) {
  HostAttention a;
  const Kernel k = cpu_kernel("alibi_softcap_window");
  TensorView q = a.view(a.q, Hq);
  q.device = Device::cuda(0);
  TensorView kk = a.view(a.k, Hkv);
  kk.shape[3] = 8;
  const std::string e = error_of([&] {
    k.forward(q, kk, a.view(a.v, Hkv), a.out_view(), {.bind = {{"window", 1.5}}, .block_mask = nullptr});
  });
  EXPECT_THAT(e, HasSubstr("flexjit_cpu_alibi_softcap_window_d16_f32: "));
  EXPECT_THAT(e, HasSubstr("q: is on cuda:0, but the kernel runs on the cpu and needs host memory"));
  EXPECT_THAT(e, HasSubstr("head dim 8 of k does not match the kernel's 16"));
  EXPECT_THAT(e, HasSubstr("'window' is a scalar int, got a float (1.5)"));
  EXPECT_THAT(e, HasSubstr("tensor 'alibi_slopes' is not bound"));

  const BlockMask mask;
  const std::vector<float> slopes(Hq, 0.5f);
  const ForwardOptions with_mask{
      .bind = {{"window", 8}, {"alibi_slopes", TensorView::contiguous(slopes.data(), f32, {Hq}, Device::cpu())}},
      .block_mask = &mask};
  EXPECT_THROW(k.forward(a.view(a.q, Hq), a.view(a.k, Hkv), a.view(a.v, Hkv), a.out_view(), with_mask), ArgumentError);
  EXPECT_THAT(error_of([&] { k.forward(a.view(a.q, Hq), a.view(a.k, Hkv), a.view(a.v, Hkv), a.out_view(), with_mask); }),
              HasSubstr("block_mask: a cpu kernel takes none"));
}

TEST(CpuForward, ValuesThatIndexOutOfBoundsAreArgumentErrors) {
  HostAttention a;
  const std::vector<float> slopes(1, 0.5f);  // one slope for four heads
  const ForwardOptions options{
      .bind = {{"window", 8}, {"alibi_slopes", TensorView::contiguous(slopes.data(), f32, {1}, Device::cpu())}}};
  const Kernel k = cpu_kernel("alibi_softcap_window");
  EXPECT_THROW(k.forward(a.view(a.q, Hq), a.view(a.k, Hkv), a.view(a.v, Hkv), a.out_view(), options), ArgumentError);
}

// Rank-0 tensors bound per call and read as numbers (`offset: Tensor[int64, 0]`).
TEST(CpuForward, RankZeroTensorsReadAsNumbers) {
  const Program p = Program::from_source(
      "offset: Tensor[int64, 0]\n"
      "temperature: Tensor[float32, 0]\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return kv_idx <= q_idx + offset.item()\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return score / temperature - float(offset) * 0.01\n",
      "rank0.py");
  const Kernel k = engine().compile(p, {.head_dim = D, .dtype = f32, .device = Device::cpu()});
  for (auto [offset, temperature] : {std::pair{std::int64_t{3}, 0.5f}, std::pair{std::int64_t{-2}, 2.0f}}) {
    HostAttention a;
    const ForwardOptions options{.lse = a.lse_view(),
                                 .bind = {{"offset", TensorView::contiguous(&offset, DType::i64, {}, Device::cpu())},
                                          {"temperature", TensorView::contiguous(&temperature, f32, {}, Device::cpu())}}};
    k.forward(a.view(a.q, Hq), a.view(a.k, Hkv), a.view(a.v, Hkv), a.out_view(), options);
    ir::Env env;
    env.tensors["offset"] = {ir::DType::Int64, {}, {}, &offset};
    env.tensors["temperature"] = {ir::DType::Float32, {}, {}, &temperature};
    const test::ReferenceOutputs ref = a.reference(p, env);
    EXPECT_LT(test::relative_l2(a.out, ref.out), 1e-5) << "offset " << offset;
  }
}

TEST(CpuForward, CompileOptionsForTheGpuAreRefused) {
  const Program p = example("causal");
  EXPECT_THROW(engine().compile(p, {.dtype = f32, .arch = "sm_90a", .device = Device::cpu()}), ArgumentError);
  EXPECT_THROW(engine().compile(p, {.dtype = f32, .tile = TileShape{}, .device = Device::cpu()}), ArgumentError);
  EXPECT_THROW(engine().compile(p, {.head_dim = 0, .dtype = f32, .device = Device::cpu()}), UnsupportedError);
}

TEST(CpuForward, CudaOnlyMembersSaySo) {
  const EngineCounters before = engine().counters();
  const Kernel k = cpu_kernel("document");
  EXPECT_EQ(engine().counters().compiles, before.compiles);  // nothing reached NVRTC
  EXPECT_EQ(engine().counters().memory_hits, before.memory_hits);
  EXPECT_FALSE(k.needs_block_mask());
  EXPECT_EQ(error_of([&] { k.cuda_source(); }), "flexjit_cpu_document_d16_f32: runs on the cpu, so it has no CUDA source");
  EXPECT_THROW(k.cubin(), Error);
  EXPECT_THROW(k.ptx(), Error);
  EXPECT_THROW(k.tile(), Error);
  EXPECT_THROW(k.resources(), Error);
  EXPECT_THROW(k.block_mask_bytes(1, 1, 64, 64), Error);
  EXPECT_THROW(k.build_block_mask(TensorView{}, 1, 1, 64, 64, {}), ArgumentError);
}

}  // namespace
}  // namespace flexjit::test

// Kernels compiled with dtype fp8_e4m3 for Device::cpu(): q, k and v in FP8 E4M3 with descale
// factors (one per tensor or per [B, Hkv]), out in bf16, against the float64 reference
// (tests/support/reference_attention.hpp) on the decoded values and the factors; and the errors
// of descales, of out's dtype, and of the calls an fp8 kernel does not run (backward, KV cache).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "api/program_impl.hpp"
#include "flexjit/fp8.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

constexpr int B = 2, Hq = 4, Hkv = 2, Tq = 40, Tkv = 56, D = 16;
constexpr int kGroup = Hq / Hkv;

// A host tensor of e4m3 codes from normal(0, 1) values, and what each code stands for.
struct Fp8Tensor {
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bits;
  std::vector<float> values;
  TensorView view() const { return TensorView::contiguous(bits.data(), fp8_e4m3, shape, Device::cpu()); }
};

Fp8Tensor random_fp8(std::vector<std::int64_t> shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  Fp8Tensor t{std::move(shape), {}, {}};
  std::size_t n = 1;
  for (std::int64_t s : t.shape) n *= static_cast<std::size_t>(s);
  for (std::size_t i = 0; i < n; ++i) {
    t.bits.push_back(float_to_e4m3_bits(normal(rng)));
    t.values.push_back(e4m3_bits_to_float(t.bits.back()));
  }
  return t;
}

// One factor per tensor ({1}) or one per (b, kv head) ([B, Hkv]); empty: not given (1).
struct Factors {
  std::vector<float> values;
  std::optional<TensorView> view() const {
    if (values.empty()) return std::nullopt;
    return TensorView::contiguous(values.data(), f32,
                                  values.size() == 1 ? std::vector<std::int64_t>{1} : std::vector<std::int64_t>{B, Hkv},
                                  Device::cpu());
  }
  double at(int b, int kv_head) const {
    if (values.empty()) return 1.0;
    return values.size() == 1 ? values[0] : values[static_cast<std::size_t>(b) * Hkv + kv_head];
  }
};

struct Fp8Attention {
  Fp8Tensor q = random_fp8({B, Hq, Tq, D}, 11), k = random_fp8({B, Hkv, Tkv, D}, 12),
            v = random_fp8({B, Hkv, Tkv, D}, 13);
  Factors q_descale, k_descale, v_descale;
  std::vector<std::uint16_t> out = std::vector<std::uint16_t>(std::size_t{B} * Hq * Tq * D);
  std::vector<float> lse = std::vector<float>(std::size_t{B} * Hq * Tq);

  void run(const Kernel& kernel, std::map<std::string, Binding> bind) {
    ForwardOptions options{.lse = TensorView::contiguous(lse.data(), f32, {B, Hq, Tq}, Device::cpu()),
                           .bind = std::move(bind)};
    options.q_descale = q_descale.view(), options.k_descale = k_descale.view(), options.v_descale = v_descale.view();
    const TensorView o = TensorView::contiguous(out.data(), bf16, {B, Hq, Tq, D}, Device::cpu());
    kernel.forward(q.view(), k.view(), v.view(), o, options);
  }

  // The float64 reference on the values the codes stand for: each tensor's decoded values times
  // its factor for (b, kv head of h), rounded to float only because the oracle reads floats.
  ReferenceOutputs reference(const Program& p, const ir::Env& env) const {
    auto descaled = [](const Fp8Tensor& t, const Factors& f, int heads, int group) {
      std::vector<float> x(t.values.size());
      const std::size_t per_head = x.size() / (static_cast<std::size_t>(B) * heads);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const int bh = static_cast<int>(i / per_head), b = bh / heads, h = bh % heads;
        x[i] = static_cast<float>(t.values[i] * f.at(b, h / group));
      }
      return x;
    };
    const std::vector<float> dq = descaled(q, q_descale, Hq, kGroup), dk = descaled(k, k_descale, Hkv, 1),
                             dv = descaled(v, v_descale, Hkv, 1);
    ReferenceInputs in{dq.data(), dk.data(), dv.data(), B, Hq, Hkv, Tq, Tkv, D};
    in.scale = 1.0 / std::sqrt(static_cast<double>(D));
    in.env = &env;
    return reference_attention(detail::ProgramAccess::impl(p).ir, in);
  }

  // out is bf16: each element within its rounding (2^-8 relative) of the reference, and lse as
  // float32 computes it.
  void expect_matches(const ReferenceOutputs& ref) const {
    std::vector<float> got(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      got[i] = bf16_bits_to_float(out[i]);
      ASSERT_LE(std::fabs(got[i] - ref.out[i]), 4e-3 * std::fabs(ref.out[i]) + 1e-6)
          << "element " << i << ": " << got[i] << " vs " << ref.out[i];
    }
    EXPECT_LT(relative_l2(got, ref.out), 4e-3);
    EXPECT_LT(relative_l2(lse, ref.lse), 1e-5);
  }
};

Kernel fp8_kernel(const Program& p) {
  return engine().compile(p, {.head_dim = D, .dtype = fp8_e4m3, .device = Device::cpu()});
}

const std::vector<float> kSlopes{0.5f, 0.25f, 0.125f, 0.0625f};

// ALiBi with a soft cap on a causal window, GQA, one factor per tensor.
TEST(CpuFp8Forward, PerTensorDescales) {
  const Program p = example("alibi_softcap_window");
  const Kernel kernel = fp8_kernel(p);
  EXPECT_EQ(kernel.entry_name(), "flexjit_cpu_alibi_softcap_window_d16_fp8_e4m3");
  EXPECT_EQ(kernel.dtype(), fp8_e4m3);
  Fp8Attention a;
  a.q_descale.values = {0.5f}, a.k_descale.values = {2.0f}, a.v_descale.values = {0.037f};
  long long window = 24;
  const TensorView slopes = TensorView::contiguous(kSlopes.data(), f32, {Hq}, Device::cpu());
  a.run(kernel, {{"window", window}, {"alibi_slopes", slopes}});
  ir::Env env;
  env.scalars["window"] = ir::Value::integer(window);
  env.tensors["alibi_slopes"] = {ir::DType::Float32, {Hq}, {}, kSlopes.data()};
  a.expect_matches(a.reference(p, env));
}

// A soft cap of 2 keeps tanh far from linear, so the mod must see the descaled score; every
// (b, kv head) has its own factors, and query heads take their kv head's.
TEST(CpuFp8Forward, PerHeadDescalesReachTheScoreMod) {
  const Program p = Program::from_source(
      "CAP = 2.0\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return CAP * torch.tanh(score / CAP)\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return q_idx >= kv_idx\n",
      "softcap_causal.py");
  Fp8Attention a;
  a.q_descale.values = {0.5f, 2.0f, 0.037f, 1.25f};
  a.k_descale.values = {2.0f, 0.75f, 3.0f, 0.037f};
  a.v_descale.values = {0.037f, 0.5f, 2.0f, 3.0f};
  a.run(fp8_kernel(p), {});
  a.expect_matches(a.reference(p, {}));
}

// Factors not given are 1: here only v's, per head, on the causal example.
TEST(CpuFp8Forward, AbsentDescalesAreOne) {
  const Program p = example("causal");
  Fp8Attention a;
  a.v_descale.values = {0.5f, 2.0f, 0.037f, 1.0f};
  a.run(fp8_kernel(p), {});
  a.expect_matches(a.reference(p, {}));
  // The first query row sees only key 0: its output is v's row 0 times v's factor, in bf16.
  for (int d = 0; d < D; ++d)
    EXPECT_EQ(a.out[static_cast<std::size_t>(d)],
              float_to_bf16_bits(static_cast<float>(a.v.values[static_cast<std::size_t>(d)] * 0.5)));
}

// Small host tensors for the error cases, whose checks all run before anything is computed.
struct ErrorCase {
  Fp8Tensor q = random_fp8({B, Hq, Tq, D}, 1), k = random_fp8({B, Hkv, Tkv, D}, 2), v = random_fp8({B, Hkv, Tkv, D}, 3);
  std::vector<std::uint16_t> out = std::vector<std::uint16_t>(std::size_t{B} * Hq * Tq * D);
  std::vector<float> out_f32 = std::vector<float>(out.size());
  std::vector<float> one{1.0f}, per_head{1.0f, 2.0f, 3.0f, 4.0f}, per_query_head = std::vector<float>(B * Hq, 1.0f);
  std::vector<double> one_f64{1.0};
  TensorView out_view() { return TensorView::contiguous(out.data(), bf16, {B, Hq, Tq, D}, Device::cpu()); }
  TensorView f32_view(const std::vector<float>& x, std::vector<std::int64_t> shape) const {
    return TensorView::contiguous(x.data(), f32, std::move(shape), Device::cpu());
  }
  std::string forward(const Kernel& kernel, const ForwardOptions& options) {
    return error_of<ArgumentError>([&] { kernel.forward(q.view(), k.view(), v.view(), out_view(), options); });
  }
};

const char* const kFp8Name = "flexjit_cpu_causal_d16_fp8_e4m3";

TEST(CpuFp8Forward, DescaleErrors) {
  ErrorCase c;
  const Kernel kernel = fp8_kernel(example("causal"));
  ForwardOptions wrong_shape;
  wrong_shape.k_descale = c.f32_view(c.per_query_head, {B, Hq});
  EXPECT_EQ(c.forward(kernel, wrong_shape),
            fmt::format("{}: k_descale: expected one element or shape [B, Hkv] = [2, 2], got [2, 4]", kFp8Name));

  ForwardOptions wrong_dtype;
  wrong_dtype.v_descale = TensorView::contiguous(c.one_f64.data(), f64, {1}, Device::cpu());
  EXPECT_EQ(c.forward(kernel, wrong_dtype), fmt::format("{}: v_descale: dtype must be f32, got f64", kFp8Name));

  ForwardOptions mixed;
  mixed.q_descale = c.f32_view(c.one, {1});
  mixed.k_descale = c.f32_view(c.per_head, {B, Hkv});
  EXPECT_EQ(c.forward(kernel, mixed),
            fmt::format("{}: q_descale, k_descale and v_descale: give all of them per tensor (one element) or all per "
                        "[B, Hkv]",
                        kFp8Name));

  ForwardOptions strided;
  strided.q_descale = TensorView{c.per_head.data(), f32, {B, Hkv}, {1, B}, Device::cpu()};
  EXPECT_EQ(c.forward(kernel, strided),
            fmt::format("{}: q_descale: must be contiguous (strides [2, 1]), got strides [1, 2]", kFp8Name));
}

TEST(CpuFp8Forward, DescaleOnABf16KernelIsAnArgumentError) {
  const Kernel kernel = engine().compile(example("causal"), {.head_dim = D, .dtype = bf16, .device = Device::cpu()});
  std::vector<std::uint16_t> q(std::size_t{B} * Hq * Tq * D), kv(std::size_t{B} * Hkv * Tkv * D), out(q.size());
  const float one = 1.0f;
  ForwardOptions options;
  options.q_descale = TensorView::contiguous(&one, f32, {1}, Device::cpu());
  auto view = [](std::vector<std::uint16_t>& x, int H, int T) {
    return TensorView::contiguous(x.data(), bf16, {B, H, T, D}, Device::cpu());
  };
  EXPECT_EQ(error_of<ArgumentError>([&] {
              kernel.forward(view(q, Hq, Tq), view(kv, Hkv, Tkv), view(kv, Hkv, Tkv), view(out, Hq, Tq), options);
            }),
            "flexjit_cpu_causal_d16_bf16: q_descale: only an fp8_e4m3 kernel takes descale factors (this one is bf16)");
}

TEST(CpuFp8Forward, OutMustBeBf16) {
  ErrorCase c;
  const Kernel kernel = fp8_kernel(example("causal"));
  EXPECT_EQ(error_of<ArgumentError>([&] {
              kernel.forward(c.q.view(), c.k.view(), c.v.view(), c.f32_view(c.out_f32, {B, Hq, Tq, D}), {});
            }),
            fmt::format("{}: out: dtype f32: an fp8_e4m3 kernel writes bf16 out", kFp8Name));
}

TEST(CpuFp8Forward, KvCacheIsUnsupported) {
  ErrorCase c;
  const Kernel kernel = fp8_kernel(example("causal"));
  const std::vector<std::int32_t> lens{Tkv, Tkv / 2};
  ForwardOptions options;
  options.kv_lens = TensorView::contiguous(lens.data(), i32, {B}, Device::cpu());
  EXPECT_EQ(error_of<UnsupportedError>(
                [&] { kernel.forward(c.q.view(), c.k.view(), c.v.view(), c.out_view(), options); }),
            fmt::format("{}: fp8_e4m3 kernels run the forward without a KV cache only (kv_lens given); use a bf16 or "
                        "fp16 kernel for calls with a KV cache",
                        kFp8Name));
}

TEST(CpuFp8Forward, BackwardIsUnsupported) {
  ErrorCase c;
  const Kernel kernel = fp8_kernel(example("causal"));
  std::vector<float> lse(std::size_t{B} * Hq * Tq);
  const TensorView out = c.out_view(), lse_view = c.f32_view(lse, {B, Hq, Tq});
  EXPECT_EQ(error_of<UnsupportedError>([&] {
              kernel.backward(c.q.view(), c.k.view(), c.v.view(), out, lse_view, out, c.q.view(), c.k.view(),
                              c.v.view(), {});
            }),
            fmt::format("{}: fp8_e4m3 kernels run the forward without a KV cache only: there is no backward; use a "
                        "bf16 or fp16 kernel for training",
                        kFp8Name));
}

}  // namespace
}  // namespace flexjit::test

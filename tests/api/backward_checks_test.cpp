// Kernel::backward's refusals, each message in full: the argument checks (every problem named
// before anything runs, as for forward), programs that cannot be differentiated, and a CUDA
// kernel's device rules.
#include <gtest/gtest.h>

#include <vector>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

constexpr int B = 1, Hq = 2, Hkv = 1, T = 6, D = 4;

const char* kProgram = R"(
window: int
slopes: Tensor[float32, 1]
doc_ids: Tensor[int32, 1]
mask_bias: Tensor[float32, 1]
unused: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)
def mask_mod(b, h, q_idx, kv_idx):
    return (doc_ids[q_idx] == doc_ids[kv_idx]) & (q_idx - kv_idx < window) & (mask_bias[kv_idx] > 0.0)
)";

// Host tensors for a well-formed call that tests then break one way at a time.
struct Call {
  std::vector<float> q = std::vector<float>(std::size_t{B} * Hq * T * D, 0.5f), kv = std::vector<float>(std::size_t{B} * Hkv * T * D, 0.25f);
  std::vector<float> lse = std::vector<float>(std::size_t{B} * Hq * T, 0.0f), slopes = {0.5f, -0.5f}, bias = std::vector<float>(T, 1.0f);
  std::vector<std::int32_t> ids = std::vector<std::int32_t>(T, 0);
  std::vector<float> dq = q, dk = kv, dv = kv, slopes_grad = slopes;

  TensorView host(std::vector<float>& x, std::vector<std::int64_t> shape) {
    return TensorView::contiguous(x.data(), f32, std::move(shape), Device::cpu());
  }
  TensorView qs(std::vector<float>& x) { return host(x, {B, Hq, T, D}); }
  TensorView kvs(std::vector<float>& x) { return host(x, {B, Hkv, T, D}); }
  BackwardOptions options() {
    return {.bind = {{"window", 3},
                     {"slopes", host(slopes, {Hq})},
                     {"doc_ids", TensorView::contiguous(ids.data(), i32, {T}, Device::cpu())},
                     {"mask_bias", host(bias, {T})},
                     {"unused", host(bias, {T})}},
            .grads = {{"slopes", host(slopes_grad, {Hq})}}};
  }
};

const Kernel& kernel() {
  static const Kernel k = engine().compile(Program::from_source(kProgram, "checked"),
                                           {.head_dim = D, .dtype = f32, .device = Device::cpu()});
  return k;
}

std::string backward_error(Call& c, const TensorView& q, const TensorView& dout, const TensorView& dq,
                           const TensorView& dk, const TensorView& dv, const TensorView& lse,
                           const BackwardOptions& options) {
  return error_of([&] { kernel().backward(q, c.kvs(c.kv), c.kvs(c.kv), c.qs(c.q), lse, dout, dq, dk, dv, options); });
}

TEST(BackwardChecks, AWellFormedCallRuns) {
  Call c;
  EXPECT_EQ(backward_error(c, c.qs(c.q), c.qs(c.q), c.qs(c.dq), c.kvs(c.dk), c.kvs(c.dv), c.host(c.lse, {B, Hq, T}),
                           c.options()),
            "");
  EXPECT_NE(c.slopes_grad, c.slopes);  // overwritten
}

TEST(BackwardChecks, EveryTensorProblemIsNamed) {
  Call c;
  std::vector<std::uint16_t> half(c.q.size());
  const TensorView dout_bf16 = TensorView::contiguous(half.data(), bf16, {B, Hq, T, D}, Device::cpu());
  const TensorView dq_short = c.host(c.dq, {B, Hq, T - 1, D});
  TensorView dk_on_gpu = c.kvs(c.dk);
  dk_on_gpu.device = Device::cuda(0);
  TensorView dv_overlapping = c.kvs(c.dv);
  dv_overlapping.strides = {T * D, T * D, 0, 1};
  const TensorView lse_3d = c.host(c.lse, {B, Hq, T - 1});
  EXPECT_EQ(backward_error(c, c.qs(c.q), dout_bf16, dq_short, dk_on_gpu, dv_overlapping, lse_3d, c.options()),
            "flexjit_cpu_checked_d4_f32: 5 problems:\n"
            "  lse: expected shape [1, 2, 6] ([B, Hq, Tq]), got [1, 2, 5]\n"
            "  dout: dtype bf16 does not match the kernel's f32\n"
            "  dq: expected the shape of q [1, 2, 6, 4], got [1, 2, 5, 4]\n"
            "  dk: is on cuda:0, but the kernel runs on the cpu and needs host memory\n"
            "  dv: stride 0 in dimension 2 would make rows overlap");
}

TEST(BackwardChecks, EveryGradientProblemIsNamed) {
  Call c;
  std::vector<float> wrong(5);
  std::vector<double> doubles(Hq);
  BackwardOptions options = c.options();
  options.grads = {
      {"slopes", c.host(wrong, {5})},
      {"doc_ids", c.host(wrong, {T})},
      {"mask_bias", c.host(wrong, {T})},
      {"unused", c.host(wrong, {T})},
      {"window", c.host(wrong, {1})},
      {"nope", c.host(wrong, {1})},
  };
  EXPECT_EQ(backward_error(c, c.qs(c.q), c.qs(c.q), c.qs(c.dq), c.kvs(c.dk), c.kvs(c.dv), c.host(c.lse, {B, Hq, T}),
                           options),
            "flexjit_cpu_checked_d4_f32: 6 problems:\n"
            "  grads: 'doc_ids' is Tensor[int32, 1]: only float tensors read by score_mod or sink have gradients\n"
            "  grads: 'mask_bias' (Tensor[float32, 1]) is read by mask_mod only, and a mask has no gradient\n"
            "  grads: 'nope' is not declared by the program (tensors with gradients: slopes)\n"
            "  grads 'slopes': expected the shape of the bound tensor [2], got [5]\n"
            "  grads: 'unused' (Tensor[float32, 1]) is read by neither score_mod nor sink, so it has no gradient\n"
            "  grads: 'window' is a scalar int: only float tensors read by score_mod or sink have gradients");

  TensorView overlapping = c.host(c.slopes_grad, {Hq});
  overlapping.strides = {0};
  options.grads = {{"slopes", TensorView::contiguous(doubles.data(), f64, {Hq}, Device::cpu())}};
  EXPECT_EQ(backward_error(c, c.qs(c.q), c.qs(c.q), c.qs(c.dq), c.kvs(c.dk), c.kvs(c.dv), c.host(c.lse, {B, Hq, T}),
                           options),
            "flexjit_cpu_checked_d4_f32: grads 'slopes': dtype must be f32, got f64");
  options.grads = {{"slopes", overlapping}};
  EXPECT_EQ(backward_error(c, c.qs(c.q), c.qs(c.q), c.qs(c.dq), c.kvs(c.dk), c.kvs(c.dv), c.host(c.lse, {B, Hq, T}),
                           options),
            "flexjit_cpu_checked_d4_f32: grads 'slopes': stride 0 in dimension 0 would make elements overlap");
}

TEST(BackwardChecks, BindingsAreCheckedAsForForward) {
  Call c;
  BackwardOptions options = c.options();
  options.bind.erase("window");
  options.scale = -1.0f;
  EXPECT_EQ(backward_error(c, c.qs(c.q), c.qs(c.q), c.qs(c.dq), c.kvs(c.dk), c.kvs(c.dv), c.host(c.lse, {B, Hq, T}),
                           options),
            "flexjit_cpu_checked_d4_f32: 2 problems:\n"
            "  scale must be finite and > 0, got -1\n"
            "  scalar 'window' is not bound (declared `window: int`)");
}

TEST(BackwardChecks, AnExponentThatVariesHasNoDerivative) {
  const Kernel k = engine().compile(Program::from_source("def score_mod(score, b, h, q_idx, kv_idx):\n"
                                                         "    return (score * 0.5 + 2.0) ** score\n",
                                                         "power"),
                                    {.head_dim = D, .dtype = f32, .device = Device::cpu()});
  Call c;
  std::vector<float> q(std::size_t{B} * Hq * T * D, 0.5f), kv(q.size(), 0.25f), dq(q.size()), dk(q.size()), dv(q.size());
  const TensorView qv = c.host(q, {B, Hq, T, D}), kvv = c.host(kv, {B, Hq, T, D});
  try {
    k.backward(qv, kvv, kvv, qv, c.host(c.lse, {B, Hq, T}), qv, c.host(dq, {B, Hq, T, D}), c.host(dk, {B, Hq, T, D}),
               c.host(dv, {B, Hq, T, D}));
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_EQ(std::string(e.what()),
              "flexjit_cpu_power_d4_f32: score_mod: cannot differentiate 'x ** y' with respect to the exponent y, "
              "which depends on the score or a captured tensor (line 2, column 32): only a constant exponent is "
              "supported; write exp(y * log(x)) for x > 0");
  }
}

// A CUDA kernel's backward checks device placement and the forward's layout rules for dout, dq,
// dk and dv, and f32 contiguous device gradients, before it compiles or launches anything.
TEST(BackwardChecks, CudaKernelsCheckTheDeviceRules) {
  const Args a = good_args();
  TensorView dout_on_host = a.q;
  dout_on_host.device = Device::cpu();
  TensorView dq_strided = a.q;
  dq_strided.strides = {8 * 128 * 64, 128 * 64, 60, 1};
  TensorView dk_columns = a.k;
  dk_columns.strides = {4 * 128 * 64, 128 * 64, 64, 2};
  TensorView slopes_grad = a.slopes;
  slopes_grad.shape = {4};
  slopes_grad.strides = {2};
  const std::string message = error_of([&] {
    alibi_kernel().backward(a.q, a.k, a.v, a.out, a.lse, dout_on_host, dq_strided, dk_columns, a.v,
                            {.bind = a.options().bind, .grads = {{"alibi_slopes", slopes_grad}}});
  });
  EXPECT_EQ(message,
            "flexjit_fwd_alibi_softcap_window_d64_bf16: 5 problems:\n"
            "  dout: is on the cpu, but the kernel needs CUDA device memory\n"
            "  dq: stride 60 of dimension 2 (Tq) is not a multiple of 8 elements (the kernel moves 16-byte vectors)\n"
            "  dk: last dimension must be contiguous (stride 1), got 2\n"
            "  grads 'alibi_slopes': must be contiguous on a CUDA device\n"
            "  grads 'alibi_slopes': expected the shape of the bound tensor [8], got [4]");
}

}  // namespace
}  // namespace flexjit::test

// The CUDA backward (sm80_bwd) against the float64 oracle (tests/support/reference_backward) on a
// few programs of each kind: the GPU forward gives out and lse, the GPU backward dq, dk, dv and the
// captured tensors' gradients, compared by relative L2 error; NaN-poisoned outputs catch anything
// left unwritten.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "api/binding_resolve.hpp"
#include "api/program_impl.hpp"
#include "ir/gradient_captures.hpp"
#include "tests/gpu/case_bindings.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/reference_backward.hpp"

namespace flexjit::gpu_test {
namespace {

struct SmokeCase {
  std::string program;
  DType dtype;
  int D, B, Hq, Hkv, Tq, Tkv;
};

void PrintTo(const SmokeCase& c, std::ostream* os) {
  *os << fmt::format("{}_{}_d{}_b{}_h{}x{}_t{}x{}", c.program, dtype_name(c.dtype), c.D, c.B, c.Hq, c.Hkv, c.Tq, c.Tkv);
}

// dq, dk, dv come from 16-bit inputs with fp32 accumulation and one rounding to 16 bits.
double gradient_tolerance(DType d) { return d == DType::bf16 ? 2e-2 : 1e-2; }

std::vector<float> random_elements(std::size_t n, DType dtype, std::mt19937_64& rng, std::vector<std::uint16_t>& bits) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> host(n);
  bits.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    bits[i] = to_element(normal(rng), dtype);
    host[i] = from_element(bits[i], dtype);
  }
  return host;
}

double rel_l2(const std::vector<float>& got, const std::vector<double>& want, std::int64_t& nans) {
  double d2 = 0, r2 = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i])) {
      ++nans;
      continue;
    }
    d2 += (got[i] - want[i]) * (got[i] - want[i]);
    r2 += want[i] * want[i];
  }
  return r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
}

class BackwardSmoke : public GpuTest, public testing::WithParamInterface<SmokeCase> {};

TEST_P(BackwardSmoke, MatchesTheFloat64Reference) {
  const SmokeCase& c = GetParam();
  std::mt19937_64 rng(1234);
  const Program program = load_program(c.program);
  const Kernel kernel = engine().compile(program, {.head_dim = c.D, .dtype = c.dtype, .math = Math::exact});
  CaseBindings bindings = random_bindings(program, {c.B, c.Hq, c.Tq, c.Tkv, c.Hkv}, rng);

  const std::size_t nq = static_cast<std::size_t>(c.B) * c.Hq * c.Tq * c.D;
  const std::size_t nk = static_cast<std::size_t>(c.B) * c.Hkv * c.Tkv * c.D;
  const std::size_t rows = static_cast<std::size_t>(c.B) * c.Hq * c.Tq;
  std::vector<std::uint16_t> bq, bk, bv, bdo;
  const std::vector<float> q = random_elements(nq, c.dtype, rng, bq), k = random_elements(nk, c.dtype, rng, bk),
                           v = random_elements(nk, c.dtype, rng, bv), dout = random_elements(nq, c.dtype, rng, bdo);
  DeviceBuffer dq_(nq * 2), dk_(nk * 2), dv_(nk * 2), q_(nq * 2), k_(nk * 2), v_(nk * 2), o_(nq * 2), do_(nq * 2),
      lse_(rows * 4);
  q_.upload(bq.data(), nq * 2);
  k_.upload(bk.data(), nk * 2);
  v_.upload(bv.data(), nk * 2);
  do_.upload(bdo.data(), nq * 2);

  std::map<std::string, Binding> bind = bindings.scalars, host_bind = bindings.scalars;
  std::vector<std::unique_ptr<DeviceBuffer>> keep;
  for (const auto& [name, t] : bindings.tensors) {
    keep.push_back(std::make_unique<DeviceBuffer>(t.bytes.size()));
    keep.back()->upload(t.bytes.data(), t.bytes.size());
    bind[name] = TensorView::contiguous(keep.back()->get(), t.dtype, t.shape);
    host_bind[name] = t.host_view();
  }
  const auto view = [&](DeviceBuffer& b, int H, int T) {
    return TensorView::contiguous(b.get(), c.dtype, {c.B, H, T, c.D});
  };
  const TensorView lse = TensorView::contiguous(lse_.get(), DType::f32, {c.B, c.Hq, c.Tq});
  kernel.forward(view(q_, c.Hq, c.Tq), view(k_, c.Hkv, c.Tkv), view(v_, c.Hkv, c.Tkv), view(o_, c.Hq, c.Tq),
                 {.lse = lse, .bind = bind});

  // Gradients of every captured float tensor score_mod or sink reads.
  const ir::Program& ir = detail::ProgramAccess::impl(program).ir;
  BackwardOptions options{.bind = bind};
  std::map<std::string, std::unique_ptr<DeviceBuffer>> grad_buffers;
  for (const std::string& name : ir::gradient_captures(ir)) {
    const HostTensor& t = bindings.tensors.at(name);
    std::int64_t n = 1;
    for (std::int64_t s : t.shape) n *= s;
    auto& buf = grad_buffers[name] = std::make_unique<DeviceBuffer>(static_cast<std::size_t>(n) * 4);
    buf->fill_bytes(0xFF);
    options.grads[name] = TensorView::contiguous(buf->get(), DType::f32, t.shape);
  }
  for (DeviceBuffer* b : {&dq_, &dk_, &dv_}) b->fill_bytes(0xFF);
  kernel.backward(view(q_, c.Hq, c.Tq), view(k_, c.Hkv, c.Tkv), view(v_, c.Hkv, c.Tkv), view(o_, c.Hq, c.Tq), lse,
                  view(do_, c.Hq, c.Tq), view(dq_, c.Hq, c.Tq), view(dk_, c.Hkv, c.Tkv), view(dv_, c.Hkv, c.Tkv),
                  options);
  synchronize();

  const auto download = [&](DeviceBuffer& b, std::size_t n) {
    std::vector<std::uint16_t> bits(n);
    b.download(bits.data(), n * 2);
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = from_element(bits[i], c.dtype);
    return out;
  };
  const std::vector<float> dq = download(dq_, nq), dk = download(dk_, nk), dv = download(dv_, nk);

  api::Problems problems;
  const ir::Env env = api::resolve_bindings(ir, host_bind, std::nullopt, problems);
  ASSERT_TRUE(problems.empty());
  test::ReferenceInputs in{q.data(), k.data(), v.data(), c.B, c.Hq, c.Hkv, c.Tq, c.Tkv, c.D, 0.0, &env};
  in.scale = 1.0 / std::sqrt(static_cast<double>(c.D));
  const test::ReferenceGradients ref = test::reference_backward(ir, in, dout.data());

  std::int64_t nans = 0;
  const double e_dq = rel_l2(dq, ref.dq, nans), e_dk = rel_l2(dk, ref.dk, nans), e_dv = rel_l2(dv, ref.dv, nans);
  EXPECT_EQ(nans, 0) << "gradient elements left unwritten (NaN poison) or NaN";
  EXPECT_LE(e_dq, gradient_tolerance(c.dtype)) << "dq";
  EXPECT_LE(e_dk, gradient_tolerance(c.dtype)) << "dk";
  EXPECT_LE(e_dv, gradient_tolerance(c.dtype)) << "dv";
  std::string captures;
  for (auto& [name, buf] : grad_buffers) {
    const std::vector<double>& want = ref.captures.at(name);
    std::vector<float> got(want.size());
    buf->download(got.data(), got.size() * 4);
    std::int64_t cnan = 0;
    const double e = rel_l2(got, want, cnan);
    EXPECT_EQ(cnan, 0) << name;
    EXPECT_LE(e, gradient_tolerance(c.dtype)) << "gradient of " << name;
    captures += fmt::format(" d{}={:.3e}", name, e);
  }
  std::cout << fmt::format("[figures] backward {}: dq={:.3e} dk={:.3e} dv={:.3e}{}\n", c.program, e_dq, e_dk, e_dv,
                           captures);
}

const DType bf16 = DType::bf16, fp16 = DType::fp16;

INSTANTIATE_TEST_SUITE_P(
    Programs, BackwardSmoke,
    testing::Values(SmokeCase{"causal", bf16, 128, 2, 4, 2, 300, 300}, SmokeCase{"causal", fp16, 64, 1, 6, 3, 177, 300},
                    SmokeCase{"sliding_window", bf16, 128, 1, 2, 1, 1000, 700},
                    SmokeCase{"alibi_softcap_window", bf16, 128, 2, 4, 2, 300, 300},
                    SmokeCase{"softcap", fp16, 64, 1, 2, 2, 129, 129},
                    SmokeCase{"relative_position_bias", bf16, 128, 1, 2, 2, 200, 200},
                    SmokeCase{"learned_sink", bf16, 128, 1, 4, 2, 300, 300},
                    SmokeCase{"document", bf16, 64, 2, 2, 1, 500, 500},
                    SmokeCase{"masked_rows", bf16, 128, 1, 2, 2, 100, 100},
                    SmokeCase{"prefix_lm", bf16, 128, 1, 2, 2, 1, 77},
                    SmokeCase{"dense_bias", fp16, 128, 1, 2, 1, 17, 17}),
    [](const testing::TestParamInfo<SmokeCase>& info) {
      std::ostringstream os;
      PrintTo(info.param, &os);
      return os.str();
    });

}  // namespace
}  // namespace flexjit::gpu_test

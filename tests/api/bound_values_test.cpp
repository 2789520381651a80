// Values known when a call binds its arguments: the shape of a captured tensor (t.shape[i],
// t.size(i), len(t)) read from the bound tensor, and asserts on runtime scalars and shapes
// checked before anything runs, as argument errors carrying the program's message.
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

constexpr int B = 2, H = 2, T = 24, D = 16;

const char* kProgram = R"(lengths: Tensor[int32, 1]
window: int

assert window > 0, "window must be positive"
assert lengths.dim() == 1, "one length per batch"
assert len(lengths) >= 2, "need a length per batch"

def mask_mod(b, h, q_idx, kv_idx):
    n = lengths.shape[0]
    return (kv_idx < lengths[(b + n - 1) % n]) & (q_idx - kv_idx < window)
)";

struct Call {
  std::vector<float> q, k, v, out = std::vector<float>(std::size_t{B} * H * T * D);
  std::vector<std::int32_t> lengths;
  Call(std::vector<std::int32_t> lens) : lengths(std::move(lens)) {
    std::mt19937 rng(5);
    std::normal_distribution<float> dist(0.f, 1.f);
    for (auto* x : {&q, &k, &v}) {
      x->resize(out.size());
      for (float& e : *x) e = dist(rng);
    }
  }
  TensorView view(std::vector<float>& x) { return TensorView::contiguous(x.data(), f32, {B, H, T, D}, Device::cpu()); }
  ForwardOptions options(long long window) {
    return {.bind = {{"window", window},
                     {"lengths", TensorView::contiguous(lengths.data(), i32,
                                                        {static_cast<std::int64_t>(lengths.size())}, Device::cpu())}}};
  }
  std::string run(const Kernel& k, long long window) {
    return error_of([&] { k.forward(view(q), view(this->k), view(v), view(out), options(window)); });
  }
};

Kernel kernel(const Program& p) { return engine().compile(p, {.head_dim = D, .dtype = f32, .device = Device::cpu()}); }

TEST(BoundValues, ShapesAreReadFromTheBoundTensor) {
  const Program p = Program::from_source(kProgram);
  // The shape value is no parameter of the program: the call binds only what it declares.
  std::vector<std::string> names;
  for (const auto& param : p.parameters()) names.push_back(param.name);
  EXPECT_EQ(names, (std::vector<std::string>{"lengths", "window"}));
  Call c({7, 12, 30});
  ASSERT_EQ(c.run(kernel(p), 5), "");
  // The reference sees n = 3: batch 0 reads lengths[2], batch 1 lengths[0].
  ir::Env env;
  env.scalars["window"] = ir::Value::integer(5);
  env.scalars["lengths.shape[0]"] = ir::Value::integer(3);
  env.tensors["lengths"] = {ir::DType::Int32, {3}, {}, c.lengths.data()};
  test::ReferenceInputs in{c.q.data(), c.k.data(), c.v.data(), B, H, H, T, T, D};
  in.scale = 1.0 / std::sqrt(static_cast<double>(D));
  in.env = &env;
  const test::ReferenceOutputs ref = test::reference_attention(detail::ProgramAccess::impl(p).ir, in);
  EXPECT_LT(test::relative_l2(c.out, ref.out), 1e-6);
  EXPECT_EQ(ref.visible[(std::size_t{1} * H + 0) * T + 20], 0);  // b 1, lengths[0] = 7: keys 16.. are past it
  EXPECT_EQ(ref.visible[(std::size_t{1} * H + 0) * T + 10], 1);  // keys 6.. below 7: key 6
  EXPECT_EQ(ref.visible[(std::size_t{0} * H + 0) * T + 23], 5);  // b 0, lengths[2] = 30: keys 19..23
}

TEST(BoundValues, AssertsFailAsArgumentErrors) {
  const Kernel k = kernel(Program::from_source(kProgram));
  Call good({7, 12, 30});
  EXPECT_EQ(good.run(k, 0), "flexjit_cpu_program_d16_f32: assertion failed: window must be positive (line 4)");
  Call one({7});
  EXPECT_EQ(one.run(k, -1),
            "flexjit_cpu_program_d16_f32: 2 problems:\n"
            "  assertion failed: window must be positive (line 4)\n"
            "  assertion failed: need a length per batch (line 6)");
  // An assert without a message shows its condition.
  const Kernel bare = kernel(Program::from_source("window: int\nassert window % 2 == 1\n\n"
                                                  "def mask_mod(b, h, q_idx, kv_idx):\n    return abs(q_idx - kv_idx) <= window // 2\n"));
  Call plain({1});
  auto run_bare = [&](long long window) {
    return error_of([&] {
      bare.forward(plain.view(plain.q), plain.view(plain.k), plain.view(plain.v), plain.view(plain.out),
                   {.bind = {{"window", window}}});
    });
  };
  EXPECT_EQ(run_bare(3), "");
  EXPECT_EQ(run_bare(4), "flexjit_cpu_program_d16_f32: assertion failed: window % 2 == 1 (line 2)");
}

TEST(BoundValues, AShapeValueCannotBeBoundByName) {
  const Kernel k = kernel(Program::from_source(kProgram));
  Call c({7, 12, 30});
  ForwardOptions o = c.options(5);
  o.bind["lengths.shape[0]"] = 3LL;
  EXPECT_THAT(error_of([&] { k.forward(c.view(c.q), c.view(c.k), c.view(c.v), c.view(c.out), o); }),
              HasSubstr("'lengths.shape[0]' is not declared by the program (declared: lengths, window)"));
}

}  // namespace
}  // namespace flexjit::test

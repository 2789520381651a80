#include "attention_problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/support/reference_attention.hpp"

namespace cpu_test {

Problem::Problem(Shape s, const ir::Env* env, std::mt19937_64& rng, float scale) : shape(s) {
  auto fill = [&](std::vector<float>& x, std::size_t n) {
    x.resize(n);
    for (auto& e : x) e = std::uniform_real_distribution<float>(-1.5f, 1.5f)(rng);
  };
  fill(q, std::size_t(s.B) * s.Hq * s.Tq * s.D);
  fill(k, std::size_t(s.B) * s.Hkv * s.Tkv * s.D);
  fill(v, std::size_t(s.B) * s.Hkv * s.Tkv * s.D);
  in = {q.data(), k.data(), v.data(), s.B, s.Hq, s.Hkv, s.Tq, s.Tkv, s.D, scale, env};
}

Output Problem::run(const ir::Program& p, cpu::CpuBackend backend) const {
  Output r;
  // Poisoned, so an unwritten element shows.
  r.out.assign(std::size_t(shape.B) * shape.Hq * shape.Tq * shape.D, std::numeric_limits<float>::quiet_NaN());
  r.lse.assign(std::size_t(shape.B) * shape.Hq * shape.Tq, std::numeric_limits<float>::quiet_NaN());
  cpu::cpu_attention_forward(p, in, r.out.data(), r.lse.data(), backend);
  return r;
}

int expect_matches_reference(const ir::Program& p, const Problem& pb, const Output& got) {
  test::ReferenceInputs in{pb.in.q, pb.in.k, pb.in.v, pb.in.B, pb.in.Hq, pb.in.Hkv, pb.in.Tq, pb.in.Tkv, pb.in.D};
  in.scale = std::isnan(pb.in.scale) ? 1.0 / std::sqrt(static_cast<double>(pb.in.D)) : pb.in.scale;
  in.env = pb.in.bindings;
  const test::ReferenceOutputs ref = test::reference_attention(p, in);
  EXPECT_LE(test::relative_l2(got.out, ref.out), 1e-5);
  int masked_rows = 0;
  for (std::size_t r = 0; r < ref.lse.size(); ++r) {
    if (std::isinf(ref.lse[r]) && ref.lse[r] < 0) {
      ++masked_rows;
      EXPECT_EQ(got.lse[r], -std::numeric_limits<float>::infinity()) << "row " << r;
      for (int d = 0; d < pb.shape.D; ++d) EXPECT_EQ(got.out[r * pb.shape.D + d], 0.0f) << "row " << r;
    } else {
      EXPECT_NEAR(got.lse[r], ref.lse[r], 1e-5) << "row " << r;
    }
  }
  return masked_rows;
}

void expect_identical(const Output& a, const Output& b) {
  ASSERT_EQ(a.out.size(), b.out.size());
  EXPECT_EQ(std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(float)), 0) << "out differs";
  EXPECT_EQ(std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)), 0) << "lse differs";
}

}  // namespace cpu_test

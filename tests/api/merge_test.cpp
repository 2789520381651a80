// merge_attention: kv shards of one sequence, each a cpu kernel call with its own kv_offset,
// merged by their log-sum-exp are the whole sequence's attention (out and lse, in f32 and in the
// 16-bit types, in place too); each shard's backward given the merged out and lse returns the
// whole call's dk and dv of its keys and its share of dq; rows no shard kept; the checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "flexjit/half.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/merge_launch.hpp"
#include "flexjit/merge.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

constexpr int H = 2, T = 40, D = 8;
constexpr int kQ0 = 20;  // the queries are rows [20, 40) of the sequence

std::vector<double> widened(const std::vector<float>& x) { return {x.begin(), x.end()}; }

// One sequence of T rows (q, k, v, dout random), called on any rows of q and any keys.
struct Sequence {
  Kernel kernel;
  std::vector<float> q, k, v, dout;

  explicit Sequence(const std::string& name)
      : kernel(engine().compile(example(name), {.head_dim = D, .dtype = f32, .device = Device::cpu()})),
        q(H * T * D), k(H * T * D), v(H * T * D), dout(H * T * D) {
    std::mt19937 rng(40);
    std::normal_distribution<float> normal;
    for (auto* x : {&q, &k, &v, &dout})
      for (float& e : *x) e = normal(rng);
  }
  // Rows [lo, hi) of an [H, T, D] array, as a contiguous [1, H, hi - lo, D] copy.
  static std::vector<float> rows(const std::vector<float>& x, int lo, int hi) {
    std::vector<float> y;
    for (int h = 0; h < H; ++h) y.insert(y.end(), x.begin() + (h * T + lo) * D, x.begin() + (h * T + hi) * D);
    return y;
  }
  static TensorView view(std::vector<float>& x, int t) {
    return TensorView::contiguous(x.data(), f32, {1, H, t, D}, Device::cpu());
  }
  static TensorView lse_view(std::vector<float>& x, int t) {
    return TensorView::contiguous(x.data(), f32, {1, H, t}, Device::cpu());
  }

  struct Part {
    std::vector<float> out, lse;
  };
  // Queries [kQ0, T) against keys [k0, k1).
  Part forward(int k0, int k1) const {
    std::vector<float> qs = rows(q, kQ0, T), ks = rows(k, k0, k1), vs = rows(v, k0, k1);
    Part p{std::vector<float>(qs.size()), std::vector<float>(H * (T - kQ0))};
    ForwardOptions o{.lse = lse_view(p.lse, T - kQ0)};
    o.q_offset = kQ0, o.kv_offset = k0;
    kernel.forward(view(qs, T - kQ0), view(ks, k1 - k0), view(vs, k1 - k0), view(p.out, T - kQ0), o);
    return p;
  }

  struct Grads {
    std::vector<float> dq, dk, dv;
  };
  // The backward of queries [kQ0, T) against keys [k0, k1), given out and lse.
  Grads backward(int k0, int k1, Part given) const {
    std::vector<float> qs = rows(q, kQ0, T), ks = rows(k, k0, k1), vs = rows(v, k0, k1), dos = rows(dout, kQ0, T);
    Grads g{std::vector<float>(qs.size()), std::vector<float>(ks.size()), std::vector<float>(vs.size())};
    BackwardOptions o;
    o.q_offset = kQ0, o.kv_offset = k0;
    kernel.backward(view(qs, T - kQ0), view(ks, k1 - k0), view(vs, k1 - k0), view(given.out, T - kQ0),
                    lse_view(given.lse, T - kQ0), view(dos, T - kQ0), view(g.dq, T - kQ0), view(g.dk, k1 - k0),
                    view(g.dv, k1 - k0), o);
    return g;
  }
};

Sequence::Part merged_of(std::vector<Sequence::Part>& parts) {
  Sequence::Part m{std::vector<float>(parts[0].out.size()), std::vector<float>(parts[0].lse.size())};
  std::vector<AttentionPart> views;
  for (Sequence::Part& p : parts)
    views.push_back({Sequence::view(p.out, T - kQ0), Sequence::lse_view(p.lse, T - kQ0)});
  merge_attention(views, Sequence::view(m.out, T - kQ0), Sequence::lse_view(m.lse, T - kQ0));
  return m;
}

// Three kv shards of a causal ALiBi sequence (the last one partly in the queries' future) merge
// to the whole call.
TEST(MergeAttention, KvShardsMergeToTheWholeSequence) {
  const Sequence s("alibi");
  const Sequence::Part whole = s.forward(0, T);
  std::vector<Sequence::Part> parts{s.forward(0, 13), s.forward(13, 29), s.forward(29, T)};
  const Sequence::Part m = merged_of(parts);
  EXPECT_LT(relative_l2(m.out, widened(whole.out)), 1e-6);
  for (std::size_t r = 0; r < whole.lse.size(); ++r) EXPECT_NEAR(m.lse[r], whole.lse[r], 1e-5) << r;
}

// Rows that a shard kept nothing of take the others' rows alone; rows no shard kept get out = 0
// and lse = -inf, as a forward call gives them.
TEST(MergeAttention, RowsNoPartKept) {
  const Sequence s("causal");
  std::vector<Sequence::Part> future{s.forward(30, 35), s.forward(35, T)};  // keys 30.. for queries 20..
  const Sequence::Part m = merged_of(future);
  const Sequence::Part whole_30 = s.forward(30, T);
  for (int h = 0; h < H; ++h)
    for (int r = 0; r < T - kQ0; ++r) {
      const int row = h * (T - kQ0) + r;
      if (kQ0 + r < 30) {
        EXPECT_EQ(m.lse[row], -INFINITY) << row;
        for (int d = 0; d < D; ++d) EXPECT_EQ(m.out[row * D + d], 0.f);
      } else {
        EXPECT_NEAR(m.lse[row], whole_30.lse[row], 1e-5) << row;
        for (int d = 0; d < D; ++d) EXPECT_NEAR(m.out[row * D + d], whole_30.out[row * D + d], 1e-5);
      }
    }
}

// The backward of the merge: each shard's backward given the merged out and lse.
TEST(MergeAttention, ShardBackwardsWithTheMergedStatisticsAreTheWholeBackward) {
  const Sequence s("alibi");
  const Sequence::Part whole = s.forward(0, T);
  const Sequence::Grads g = s.backward(0, T, whole);
  const int cuts[] = {0, 13, 29, T};
  std::vector<Sequence::Part> parts;
  for (int i = 0; i < 3; ++i) parts.push_back(s.forward(cuts[i], cuts[i + 1]));
  const Sequence::Part m = merged_of(parts);
  std::vector<double> dq_sum(g.dq.size(), 0.0);
  for (int i = 0; i < 3; ++i) {
    const Sequence::Grads gi = s.backward(cuts[i], cuts[i + 1], m);
    for (std::size_t j = 0; j < dq_sum.size(); ++j) dq_sum[j] += gi.dq[j];
    EXPECT_LT(relative_l2(gi.dk, widened(Sequence::rows(g.dk, cuts[i], cuts[i + 1]))), 1e-5) << "shard " << i;
    EXPECT_LT(relative_l2(gi.dv, widened(Sequence::rows(g.dv, cuts[i], cuts[i + 1]))), 1e-5) << "shard " << i;
  }
  EXPECT_LT(relative_l2(g.dq, dq_sum), 1e-5);
  // A shard's own statistics in place of the merged ones give another gradient: the test can fail.
  const Sequence::Grads own = s.backward(0, 13, parts[0]);
  EXPECT_GT(relative_l2(own.dv, widened(Sequence::rows(g.dv, 0, 13))), 0.05);
}

// bf16 parts into an fp16 out, in place over the first part's lse; the result is the f32 merge
// rounded once.
TEST(MergeAttention, SixteenBitPartsAndInPlace) {
  const Sequence s("alibi");
  std::vector<Sequence::Part> parts{s.forward(0, 17), s.forward(17, T)};
  const Sequence::Part want = merged_of(parts);
  const int n = H * (T - kQ0) * D;
  std::vector<std::uint16_t> a(n), b(n), out(n);
  for (int i = 0; i < n; ++i) a[i] = float_to_bf16_bits(parts[0].out[i]), b[i] = float_to_bf16_bits(parts[1].out[i]);
  auto half_view = [](std::vector<std::uint16_t>& x, DType t) {
    return TensorView::contiguous(x.data(), t, {1, H, T - kQ0, D}, Device::cpu());
  };
  std::vector<float> lse0 = parts[0].lse, lse1 = parts[1].lse;
  const TensorView lse_in_place = Sequence::lse_view(lse0, T - kQ0);
  const std::vector<AttentionPart> views{{half_view(a, bf16), lse_in_place},
                                         {half_view(b, bf16), Sequence::lse_view(lse1, T - kQ0)}};
  merge_attention(views, half_view(out, fp16), lse_in_place);
  std::vector<float> got(n);
  for (int i = 0; i < n; ++i) got[i] = fp16_bits_to_float(out[i]);
  EXPECT_LT(relative_l2(got, widened(want.out)), 1e-2);  // bf16 inputs: 8 bits of mantissa
  for (std::size_t r = 0; r < lse0.size(); ++r) EXPECT_NEAR(lse0[r], want.lse[r], 1e-5) << r;
  // And out in place over a part's own out.
  std::vector<float> in_place = parts[0].out;
  std::vector<AttentionPart> own{{Sequence::view(in_place, T - kQ0), Sequence::lse_view(parts[0].lse, T - kQ0)},
                                 {Sequence::view(parts[1].out, T - kQ0), Sequence::lse_view(parts[1].lse, T - kQ0)}};
  std::vector<float> lse(parts[0].lse.size());
  merge_attention(own, Sequence::view(in_place, T - kQ0), Sequence::lse_view(lse, T - kQ0));
  EXPECT_LT(relative_l2(in_place, widened(want.out)), 1e-7);
}

TEST(MergeAttention, ArgumentsAreChecked) {
  std::vector<float> o(2 * 3 * 4 * 8), l(2 * 3 * 4), wide(2 * 3 * 5 * 8);
  const TensorView out = TensorView::contiguous(o.data(), f32, {2, 3, 4, 8}, Device::cpu());
  const TensorView lse = TensorView::contiguous(l.data(), f32, {2, 3, 4}, Device::cpu());
  EXPECT_EQ(error_of([&] { merge_attention({}, out, lse); }), "merge_attention: no parts to merge");
  const std::vector<AttentionPart> wrong{
      {TensorView::contiguous(wide.data(), f32, {2, 3, 5, 8}, Device::cpu()), lse},
      {out, TensorView::contiguous(l.data(), i32, {2, 3, 4}, Device::cpu())},
      {TensorView::contiguous(o.data(), f32, {2, 3, 4, 8}, Device::cuda(0)),
       TensorView::contiguous(l.data(), f32, {2, 12}, Device::cpu())}};
  EXPECT_EQ(error_of([&] { merge_attention(wrong, out, lse); }),
            "merge_attention: 4 problems:\n"
            "  parts[0].out: expected out's shape [2, 3, 4, 8], got [2, 3, 5, 8]\n"
            "  parts[1].lse: dtype must be f32, got i32\n"
            "  parts[2].out: is on cuda:0, but out is on cpu: merge_attention takes tensors of one device\n"
            "  parts[2].lse: expected 3 dims ([B, H, T]), got shape [2, 12]");
  const std::vector<AttentionPart> one{{out, lse}};
  const TensorView bytes = TensorView::contiguous(o.data(), i8, {2, 3, 4, 8}, Device::cpu());
  EXPECT_THAT(error_of([&] { merge_attention(one, bytes, lse); }),
              HasSubstr("out: dtype must be bf16, fp16 or f32, got i8"));
  const TensorView negative = TensorView::contiguous(l.data(), f32, {2, 3, -4}, Device::cpu());
  EXPECT_THAT(error_of([&] { merge_attention(one, out, negative); }),
              HasSubstr("lse: dimension 2 is -4, outside 0..2147483647"));
}

// CUDA tensors: every one on out's device, checked like the host's before anything runs (the
// launch itself: tests/gpu/merge_test.cpp); and the kernel compiles for sm_80 and sm_90a.
TEST(MergeAttention, CudaTensorsAreCheckedAndTheKernelCompiles) {
  const TensorView out = TensorView::contiguous(fake(1), bf16, {2, 3, 4, 8}, Device::cuda(0));
  const TensorView lse = TensorView::contiguous(fake(2), f32, {2, 3, 4}, Device::cuda(0));
  const std::vector<AttentionPart> parts{{TensorView::contiguous(fake(3), f32, {2, 3, 4, 8}, Device::cuda(1)), lse},
                                         {out, TensorView::contiguous(fake(4), f32, {2, 3, 4}, Device::cpu())}};
  EXPECT_EQ(error_of([&] { merge_attention(parts, out, lse); }),
            "merge_attention: 2 problems:\n"
            "  parts[0].out: is on cuda:1, but out is on cuda:0: merge_attention takes tensors of one device\n"
            "  parts[1].lse: is on cpu, but out is on cuda:0: merge_attention takes tensors of one device");
  // Checked, then the launch: without a driver it fails there, not at the arguments.
  const std::vector<AttentionPart> good{{out, lse}, {TensorView::contiguous(fake(3), fp16, {2, 3, 4, 8}), lse}};
  EXPECT_THAT(error_of([&] { merge_attention(good, out, lse); }), ::testing::Not(HasSubstr("problem")));
  for (const char* arch : {"sm_80", "sm_90a"})
    EXPECT_NO_THROW(jit::compile(api::compile_request(api::merge_source(arch)))) << arch;
}

}  // namespace
}  // namespace flexjit::test

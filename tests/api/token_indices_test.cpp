// Token-level top-k (`sel: TokenIndices`, DeepSeek sparse attention): each query row attends only
// to the key positions its list names. cpu kernels against the float64 oracles, forward and
// backward (lists per query head, per kv head and one for all heads; -1 padding and repeats;
// masks and score mods on top; value head dims of their own; a KV cache's own lengths), the
// binding's checks. CUDA kernels: tests/api/token_list_launch_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "api/program_impl.hpp"
#include "tests/api/absorbed_mla.hpp"
#include "tests/api/api_test_support.hpp"
#include "tests/api/backward_case.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

const char* kTokenCausal = R"(
selected: TokenIndices

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
)";

const char* kTokenAlibiSoftcap = R"(
selected: TokenIndices
alibi_slopes: Tensor[float32, 1]

def score_mod(score, b, h, q_idx, kv_idx):
    s = score + alibi_slopes[h] * (kv_idx - q_idx)
    return 20.0 * tanh(s / 20.0)
)";

// Random lists [B, H, Tq, K]: the row's own key first in half the rows, -1 padding, repeats and
// keys anywhere in [0, Tkv).
std::vector<std::int32_t> random_lists(int B, int H, int Tq, int Tkv, int K, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> x(static_cast<std::size_t>(B) * H * Tq * K);
  std::size_t i = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int q = 0; q < Tq; ++q)
        for (int k = 0; k < K; ++k, ++i) {
          const unsigned r = rng() % 10;
          if (k == 0 && r < 5) x[i] = std::min(q, Tkv - 1);
          else if (r < 2) x[i] = -1;
          else if (r < 4 && k > 0) x[i] = x[i - 1 - rng() % k];
          else x[i] = static_cast<std::int32_t>(rng() % Tkv);
        }
  return x;
}

ReferenceOutputs forward_reference(const BackwardCase& c) {
  const BackwardShape& s = c.shape;
  ReferenceInputs in{c.q.data(), c.k.data(), c.v.data(), s.B, s.Hq, s.Hkv, s.Tq, s.Tkv, s.D};
  in.Dv = s.Dv;
  in.scale = 1.0 / std::sqrt(static_cast<double>(s.D));
  ir::Env env;
  for (const auto& [name, value] : c.bindings()) {
    if (const auto* t = std::get_if<TensorView>(&value))
      env.tensors[name] = ir::TensorBinding{t->dtype == DType::i32 ? ir::DType::Int32 : ir::DType::Float32, t->shape, {},
                                            t->data};
  }
  in.env = &env;
  return reference_attention(detail::ProgramAccess::impl(c.program).ir, in);
}

// Lists of H heads (Hq, Hkv or 1) on a GQA problem, forward and backward against the oracles.
TEST(TokenIndices, ForwardAndBackwardMatchTheOracles) {
  const BackwardShape shape{.B = 2, .Hq = 4, .Hkv = 2, .Tq = 23, .Tkv = 37, .D = 16};
  for (int H : {4, 2, 1}) {
    BackwardCase c("causal tokens H=" + std::to_string(H), Program::from_source(kTokenCausal, "dsa.py"), shape);
    c.bind_ints("selected", {2, H, 23, 9}, random_lists(2, H, 23, 37, 9, 100 + H));
    c.run();
    const ReferenceOutputs ref = forward_reference(c);
    EXPECT_LT(relative_l2(c.out, ref.out), 1e-6) << c.name;
    expect_matches_reference(c);
  }
}

TEST(TokenIndices, ScoreModsAndCaptureGradientsOnTheListedKeys) {
  BackwardCase c("alibi softcap tokens", Program::from_source(kTokenAlibiSoftcap, "dsa_alibi.py"),
                 {.B = 1, .Hq = 4, .Hkv = 1, .Tq = 29, .Tkv = 29, .D = 8, .Dv = 12});
  c.bind_floats("alibi_slopes", {4}, {0.5f, 0.25f, -0.125f, 0.0625f}, true);
  c.bind_ints("selected", {1, 1, 29, 6}, random_lists(1, 1, 29, 29, 6, 7));
  c.run();
  EXPECT_LT(relative_l2(c.out, forward_reference(c).out), 1e-6);
  expect_matches_reference(c);
}

// A list of every key, in any order, gives the plain causal program's results bit for bit: the
// same pairs, summed in the same order.
TEST(TokenIndices, ListingEveryKeyIsTheDenseAnswer) {
  const int Tq = 17, Tkv = 17, K = Tkv;
  std::vector<std::int32_t> all(static_cast<std::size_t>(Tq) * K);
  for (int q = 0; q < Tq; ++q)
    for (int k = 0; k < K; ++k) all[q * K + k] = (k * 7 + q) % Tkv;  // a permutation per row
  const BackwardShape shape{.B = 1, .Hq = 2, .Hkv = 2, .Tq = Tq, .Tkv = Tkv, .D = 8};
  BackwardCase listed("every key", Program::from_source(kTokenCausal, "dsa.py"), shape);  // same name: same data
  listed.bind_ints("selected", {1, 1, Tq, K}, all);
  listed.run();
  BackwardCase causal("every key", example("causal"), shape);
  causal.run();
  ASSERT_EQ(listed.q, causal.q);
  EXPECT_EQ(listed.out, causal.out);
  EXPECT_EQ(listed.lse, causal.lse);
  EXPECT_EQ(listed.dq, causal.dq);
  EXPECT_EQ(listed.dk, causal.dk);
  EXPECT_EQ(listed.dv, causal.dv);
}

// A KV cache (kv_lens): positions are within each sequence; a listed key at or past its length is
// refused with the entry named.
TEST(TokenIndices, KvCacheLengthsBoundTheListedKeys) {
  const Program program = Program::from_source(kTokenCausal, "dsa.py");
  const Kernel k = engine().compile(program, {.head_dim = 8, .dtype = f32, .device = Device::cpu()});
  const int B = 2, H = 2, Tq = 2, Tkv = 12, K = 3;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> q(B * H * Tq * 8), kk(B * H * Tkv * 8), v(kk.size()), out(q.size());
  for (auto* x : {&q, &kk, &v})
    for (float& e : *x) e = normal(rng);
  std::vector<std::int32_t> lens = {12, 5};
  // Rows of sequence 1 are its last two positions (3 and 4): the causal mask sees q_idx = row.
  std::vector<std::int32_t> lists = {11, 3, -1, 0, 1, 2, 4, 4, 1, 0, 2, -1};  // [B, 1, Tq, K]
  auto host = [](auto& x, DType t, std::vector<std::int64_t> shape) {
    return TensorView::contiguous(x.data(), t, std::move(shape), Device::cpu());
  };
  ForwardOptions o;
  o.kv_lens = host(lens, i32, {B});
  o.bind["selected"] = host(lists, i32, {B, 1, Tq, K});
  k.forward(host(q, f32, {B, H, Tq, 8}), host(kk, f32, {B, H, Tkv, 8}), host(v, f32, {B, H, Tkv, 8}),
            host(out, f32, {B, H, Tq, 8}), o);
  ReferenceInputs in{q.data(), kk.data(), v.data(), B, H, H, Tq, Tkv, 8};
  in.scale = 1.0 / std::sqrt(8.0);
  in.kv_lens = lens.data();
  ir::Env env;
  env.tensors["selected"] = ir::TensorBinding{ir::DType::Int32, {B, 1, Tq, K}, {}, lists.data()};
  in.env = &env;
  EXPECT_LT(relative_l2(out, reference_attention(detail::ProgramAccess::impl(program).ir, in).out), 1e-6);

  lists[7] = 5;  // sequence 1 has keys 0..4
  try {
    k.forward(host(q, f32, {B, H, Tq, 8}), host(kk, f32, {B, H, Tkv, 8}), host(v, f32, {B, H, Tkv, 8}),
              host(out, f32, {B, H, Tq, 8}), o);
    FAIL() << "a key past the sequence's end was taken";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("token indices 'selected': entry [1, 0, 0, 1] = 5 is not a key position (0..4) or -1"));
  }
}

// DeepSeek-V3.2's decode: absorbed MLA (one kv head of 576 columns in pages, v the first 512
// columns of the same pages, 16 query heads) where each new token attends to its indexer's keys.
TEST(TokenIndices, AbsorbedMlaDecodeOverPagesWithTokenLists) {
  constexpr int B = 2, Tq = 1, K = 20;
  const Program program = Program::from_source(  // the lists alone decide
      "selected: TokenIndices\n\ndef score_mod(score, b, h, q_idx, kv_idx):\n    return score\n", "dsa_mla.py");
  const Kernel k = engine().compile(program, {.head_dim = AbsorbedMlaDecode::D, .head_dim_v = AbsorbedMlaDecode::Dv,
                                              .dtype = f32, .device = Device::cpu()});
  AbsorbedMlaDecode mla(B, 16, Tq, 6, {45, 17}, {5, 1, 3, 0, 2, -1}, 32);
  // Lists [B, 1, Tq, K] of keys within each sequence (-1 unused, one repeat).
  std::vector<std::int32_t> lists(std::size_t{B} * Tq * K, -1);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < K - 4; ++i) lists[b * K + i] = static_cast<std::int32_t>(mla.rng() % mla.lens[b]);
  lists[K - 1] = lists[0];
  ForwardOptions o;
  o.bind["selected"] = TensorView::contiguous(lists.data(), i32, {B, 1, Tq, K}, Device::cpu());
  mla.run(k, o);
  ir::Env env;
  env.tensors["selected"] = ir::TensorBinding{ir::DType::Int32, {B, 1, Tq, K}, {}, lists.data()};
  const ReferenceOutputs ref = mla.reference(detail::ProgramAccess::impl(program).ir, env);
  EXPECT_LT(relative_l2(mla.out, ref.out), 1e-6);
}

std::string forward_error(const Binding& selected, std::vector<std::int64_t> q_shape = {1, 4, 6, 8}) {
  const Kernel k = engine().compile(Program::from_source(kTokenCausal, "dsa.py"),
                                    {.head_dim = 8, .dtype = f32, .device = Device::cpu()});
  std::vector<float> q(1 * 4 * 6 * 8), kv(1 * 2 * 6 * 8), out(q.size());
  ForwardOptions o;
  o.bind["selected"] = selected;
  return error_of([&] {
    k.forward(TensorView::contiguous(q.data(), f32, q_shape, Device::cpu()),
              TensorView::contiguous(kv.data(), f32, {1, 2, 6, 8}, Device::cpu()),
              TensorView::contiguous(kv.data(), f32, {1, 2, 6, 8}, Device::cpu()),
              TensorView::contiguous(out.data(), f32, q_shape, Device::cpu()), o);
  });
}

TEST(TokenIndices, TheBindingIsChecked) {
  std::vector<std::int32_t> ints(1 * 4 * 6 * 3, -1);
  std::vector<std::int64_t> longs(ints.size(), -1);
  auto view = [&](std::vector<std::int64_t> shape) {
    return TensorView::contiguous(ints.data(), i32, std::move(shape), Device::cpu());
  };
  EXPECT_THAT(forward_error(7LL), HasSubstr("'selected' expects TokenIndices (an int32 tensor [B, Hq, Hkv or 1 heads, "
                                            "Tq, K]), got an int (7)"));
  EXPECT_THAT(forward_error(TensorView::contiguous(longs.data(), i64, {1, 4, 6, 3}, Device::cpu())),
              HasSubstr("'selected' expects TokenIndices"));
  EXPECT_THAT(forward_error(view({1, 4, 6})), HasSubstr("'selected' expects TokenIndices"));
  const std::string want = "token indices 'selected': expected shape [B=1, H (Hq=4, Hkv=2 or 1), Tq=6, K]";
  EXPECT_THAT(forward_error(view({1, 3, 6, 3})), HasSubstr(want + ", got [1, 3, 6, 3]"));
  EXPECT_THAT(forward_error(view({1, 4, 5, 3})), HasSubstr(want + ", got [1, 4, 5, 3]"));
  ints[5] = 6;  // Tkv = 6
  EXPECT_THAT(forward_error(view({1, 4, 6, 3})),
              HasSubstr("token indices 'selected': entry [0, 0, 1, 2] = 6 is not a key position (0..5) or -1"));
  ints[5] = -2;
  EXPECT_THAT(forward_error(view({1, 4, 6, 3})), HasSubstr("entry [0, 0, 1, 2] = -2 is not a key position"));
}

TEST(TokenIndices, AProgramListsKeysOneWay) {
  const Program p = Program::from_source(kTokenAlibiSoftcap, "dsa_alibi.py");
  ASSERT_EQ(p.parameters().size(), 2u);
  EXPECT_EQ(p.parameters()[0].name, "selected");
  EXPECT_EQ(p.parameters()[0].kind, Parameter::Kind::token_indices);
  EXPECT_EQ(p.parameters()[0].dtype, i32);
  EXPECT_EQ(p.parameters()[0].rank, 4);
  EXPECT_TRUE(p.parameters()[0].takes_tensor());
}

}  // namespace
}  // namespace flexjit::test

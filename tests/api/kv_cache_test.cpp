// Decode against a KV cache on a cpu kernel (ForwardOptions::kv_lens, page_table): paged and
// contiguous-with-lengths caches under every decode program of tests/support/decode_case.hpp
// (which tests/gpu/decode_test.cpp runs on CUDA kernels), against the float64 reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "tests/api/api_test_support.hpp"
#include "tests/support/decode_case.hpp"

namespace flexjit::test {
namespace {

constexpr int D = 32;
// The host back end computes in fp32 as the reference does in float64: only rounding differs.
constexpr DecodeTolerance kTolerance{.out_rel_l2 = 1e-5, .lse_rel_l2 = 1e-6,
                                     .lse_max_abs = std::numeric_limits<double>::infinity()};

// Runs the case on a cpu kernel with host tensors of the case's dtype (16-bit outputs read back
// as floats).
DecodeOutputs run_on_cpu(const Kernel& kernel, const DecodeCase& c, const DecodeBindings& bound) {
  DecodeOutputs r{std::vector<float>(c.rows() * static_cast<std::size_t>(c.Dv), -1.f), std::vector<float>(c.rows(), -1.f)};
  ForwardOptions o{.lse = TensorView::contiguous(r.lse.data(), f32, c.lse_shape(), Device::cpu()), .bind = bound.bind};
  o.kv_lens = TensorView::contiguous(c.lens.data(), i32, {c.B}, Device::cpu());
  o.q_offset = c.shape.q_offset, o.kv_offset = c.shape.kv_offset;
  if (c.paged()) o.page_table = TensorView::contiguous(c.table.data(), i32, {c.B, c.max_pages}, Device::cpu());
  const DType dtype = c.shape.dtype;
  if (dtype == f32) {
    kernel.forward(TensorView::contiguous(c.q.data(), f32, c.q_shape(), Device::cpu()),
                   TensorView::contiguous(c.k.data(), f32, c.kv_shape(), Device::cpu()),
                   TensorView::contiguous(c.v.data(), f32, c.v_shape(), Device::cpu()),
                   TensorView::contiguous(r.out.data(), f32, c.out_shape(), Device::cpu()), o);
    return r;
  }
  const std::vector<std::uint16_t> q = c.elements(c.q), k = c.elements(c.k), v = c.elements(c.v);
  std::vector<std::uint16_t> out(r.out.size());
  kernel.forward(TensorView::contiguous(q.data(), dtype, c.q_shape(), Device::cpu()),
                 TensorView::contiguous(k.data(), dtype, c.kv_shape(), Device::cpu()),
                 TensorView::contiguous(v.data(), dtype, c.v_shape(), Device::cpu()),
                 TensorView::contiguous(out.data(), dtype, c.out_shape(), Device::cpu()), o);
  std::transform(out.begin(), out.end(), r.out.begin(),
                 [&](std::uint16_t e) { return dtype == bf16 ? bf16_bits_to_float(e) : fp16_bits_to_float(e); });
  return r;
}

Kernel cpu_kernel(const Program& p, DType dtype = f32, CpuBackend backend = CpuBackend::automatic, int head_dim_v = 0) {
  return engine().compile(
      p, {.head_dim = D, .head_dim_v = head_dim_v, .dtype = dtype, .device = Device::cpu(), .cpu_backend = backend});
}

DecodeShape layout(int Hq, int Hkv, int Tq, int page_size) {
  return {.Hq = Hq, .Hkv = Hkv, .Tq = Tq, .page_size = page_size, .D = D};
}

std::string shape_name(const testing::TestParamInfo<DecodeShape>& info) { return decode_layout_name(info.param); }

class KvCache : public testing::TestWithParam<DecodeShape> {};

TEST_P(KvCache, EveryProgramMatchesTheReference) {
  const DecodeCase c(GetParam());
  for (const DecodeProgram& dp : kDecodePrograms) {
    const Program p = load_decode_program(dp);
    const DecodeBindings bound(p, c);
    const DecodeOutputs r = run_on_cpu(cpu_kernel(p), c, bound);
    expect_decode_matches(c, c.reference(p, bound.env), r, kTolerance, dp.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Decode, KvCache,
                         testing::Values(layout(32, 8, 1, 16), layout(32, 8, 4, 16), layout(32, 8, 1, 64),
                                         layout(32, 8, 4, 64), layout(32, 8, 4, 256), layout(8, 1, 1, 256),
                                         layout(8, 1, 4, 64), layout(32, 8, 4, 0), layout(8, 1, 1, 0)),
                         shape_name);

// Chunked prefill (prefill_chunk: 100 new tokens per sequence), paged and contiguous.
INSTANTIATE_TEST_SUITE_P(PrefillChunk, KvCache,
                         testing::Values(prefill_chunk(layout(8, 2, 1, 16)), prefill_chunk(layout(8, 2, 1, 256)),
                                         prefill_chunk(layout(8, 2, 1, 0))),
                         shape_name);

// v and out of their own head dim (multi-head latent attention's shapes): decode and chunked
// prefill, paged and contiguous, a mask, a sink, block lists and a tensor-reading mask.
TEST(KvCacheDecode, ValueHeadDimOfItsOwn) {
  for (DecodeShape s : {layout(8, 2, 4, 16), prefill_chunk(layout(8, 2, 1, 64)), layout(8, 1, 1, 0)}) {
    s.Dv = D / 2;
    const DecodeCase c(s);
    ASSERT_EQ(c.v.size() * 2, c.k.size());
    for (const char* name : {"causal", "learned_sink", "documents", "top_k_blocks"}) {
      const Program p = load_decode_program(decode_program(name));
      const DecodeBindings bound(p, c);
      const DecodeOutputs r = run_on_cpu(cpu_kernel(p, f32, CpuBackend::automatic, s.Dv), c, bound);
      expect_decode_matches(c, c.reference(p, bound.env), r, kTolerance,
                            std::string(name) + " " + decode_layout_name(s) + " Dv " + std::to_string(s.Dv));
    }
  }
}

// A shard of a longer sequence (ForwardOptions::q_offset, kv_offset) on the programs that index
// no tensor by position: the queries 20 past the keys' shard, and keys 20 past the queries (the
// last keys of each sequence in every row's future).
TEST(KvCacheDecode, GlobalPositions) {
  for (const auto& [q_offset, kv_offset] : {std::pair{300, 280}, std::pair{0, 20}}) {
    DecodeShape s = layout(8, 2, 4, 16);
    s.q_offset = q_offset, s.kv_offset = kv_offset;
    const DecodeCase c(s);
    for (const char* name : {"causal", "sliding_window", "window_with_sink_tokens", "learned_sink", "alibi"}) {
      const Program p = load_decode_program(decode_program(name));
      const DecodeBindings bound(p, c);
      const ReferenceOutputs ref = c.reference(p, bound.env);
      expect_decode_matches(c, ref, run_on_cpu(cpu_kernel(p), c, bound), kTolerance,
                            std::string(name) + " " + decode_layout_name(s));
      // Not the answer without offsets: each row sees another number of keys.
      DecodeShape plain = s;
      plain.q_offset = plain.kv_offset = 0;
      EXPECT_NE(DecodeCase(plain).reference(p, bound.env).visible, ref.visible) << name;
    }
  }
}

// The causal decode mask among Tq = 4 new tokens: the last token sees every key of its sequence,
// the first one the keys before the other three.
TEST(KvCacheDecode, NewTokensAreCausalAmongThemselves) {
  const Program p = load_decode_program(decode_program("causal"));
  const DecodeCase c(layout(8, 2, 4, 16));
  const DecodeBindings bound(p, c);
  const DecodeOutputs r = run_on_cpu(cpu_kernel(p), c, bound);
  const ReferenceOutputs ref = c.reference(p, bound.env);
  for (int b = 0; b < c.B; ++b)
    for (int i = 0; i < c.Tq; ++i)
      EXPECT_EQ(ref.visible[static_cast<std::size_t>(b) * c.Hq * c.Tq + i], std::max(0, c.lens[b] - c.Tq + i + 1));
  expect_decode_matches(c, ref, r, kTolerance, "causal");
}

// The interpreter (the executable spec) runs the same paged call as the LLVM code.
TEST(KvCacheDecode, InterpreterMatchesTheReference) {
  const Program p = load_decode_program(decode_program("learned_sink"));
  const DecodeCase c(layout(8, 2, 4, 16));
  const DecodeBindings bound(p, c);
  const DecodeOutputs r = run_on_cpu(cpu_kernel(p, f32, CpuBackend::interpreter), c, bound);
  expect_decode_matches(c, c.reference(p, bound.env), r, kTolerance, "learned_sink");
  // With a sink, the empty sequence's rows have lse = the sink.
  ASSERT_EQ(c.lens[1], 0);
  for (int h = 0; h < c.Hq; ++h)
    EXPECT_EQ(r.lse[static_cast<std::size_t>(1 * c.Hq + h) * c.Tq], bound.sinks[static_cast<std::size_t>(h)]);
}

// bf16 pages: converted like any input, the same result as f32 pages holding the rounded values.
TEST(KvCacheDecode, Bf16PagesMatchTheRoundedF32Run) {
  const Program p = load_decode_program(decode_program("causal"));
  DecodeShape s = layout(8, 2, 1, 64);
  s.dtype = bf16;
  const DecodeCase c(s);
  const DecodeBindings bound(p, c);
  const DecodeOutputs r = run_on_cpu(cpu_kernel(p, bf16), c, bound);
  EXPECT_LT(relative_l2(r.out, c.reference(p, bound.env).out), 1e-2);
}

}  // namespace
}  // namespace flexjit::test

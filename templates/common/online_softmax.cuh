// flexjit: the online softmax of a query tile, in the shared accumulator layout (common/logits.cuh):
// per warp, a thread holds rows g and g + 8 of each m16 tile (index [mt][hf]) and the columns
// 2t, 2t + 1 of each n8 block; row reductions are over the 4 lanes of a quad. Logits are in the
// log2 domain (exp2 with log2(e) folded into the scale or the score mod's result).
#pragma once

#include "common/attention_common.cuh"
#include "common/fma_exp2.cuh"

namespace flexjit {
namespace detail {

// Lazy rescaling: a row keeps its stale running max while the tile's max stays within
// kRescaleSlack of it, so probabilities are bounded by 2^kRescaleSlack (harmless in fp32 and in
// the bf16/fp16 P operand) and O, l need no rescale. Once the running max settles (after a few
// tiles on most data) whole iterations skip the MT*D/2 multiplies: the warp-uniform vote keeps the
// branch divergence-free.
constexpr float kRescaleSlack = 8.f;  // log2 units

// One kv tile, first half: raises the running max m_run, turns the logits s into unnormalised
// probabilities exp2(s * factor - m) in place and adds them to l_run (this thread's columns only;
// quad-summed by finish_row), rescaling l_run by corr, the factor O must be rescaled by. Returns
// whether any row of the warp moved its max (then call rescale_output). factor: 1 when the logits
// are already scaled (a score mod ran), else scale * log2(e). Touches no O register, so a family
// may run it while a PV product of the previous tile is still in flight. kFmaExpEvery > 0: every
// kFmaExpEvery-th n8 block's exponentials run on the FMA pipe (fma_exp2), the others on the special
// function unit, where a kernel's products outpace that unit alone (the FP8 forward).
template <int kFmaExpEvery = 0, int MT, int NN>
__device__ __forceinline__ bool softmax_exponentiate(float (&s)[MT][NN][4], float (&m_run)[MT][2],
                                                     float (&l_run)[MT][2], float (&corr)[MT][2], float factor) {
  bool grow = false;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      float mx = neg_inf();
#pragma unroll
      for (int nt = 0; nt < NN; ++nt) mx = fmax2(mx, fmax2(s[mt][nt][2 * hf], s[mt][nt][2 * hf + 1]));
      mx = quad_max(mx) * factor;  // -inf stays -inf (factor > 0)
      // -inf + slack = -inf: a row's first kept logit always takes the max; all-masked tiles never do.
      const bool up = mx > m_run[mt][hf] + kRescaleSlack;
      corr[mt][hf] = up ? fast_exp2(m_run[mt][hf] - mx) : 1.f;  // exp2(-inf) = 0 for a fresh row
      m_run[mt][hf] = up ? mx : m_run[mt][hf];
      grow |= up;
      // A row with nothing kept so far has m_run = -inf: use 0 as the base so that exp2(-inf - base)
      // gives 0 instead of NaN.
      const float m_base = m_run[mt][hf] == neg_inf() ? 0.f : m_run[mt][hf];
      float rs = 0.f;
#pragma unroll
      for (int nt = 0; nt < NN; ++nt) {
#pragma unroll
        for (int e = 2 * hf; e < 2 * hf + 2; ++e) {
          const float x = __fmaf_rn(s[mt][nt][e], factor, -m_base);
          const float pe = kFmaExpEvery > 0 && nt % kFmaExpEvery == kFmaExpEvery - 1 ? fma_exp2(x) : fast_exp2(x);
          s[mt][nt][e] = pe;
          rs += pe;
        }
      }
      l_run[mt][hf] = __fmul_rn(l_run[mt][hf], corr[mt][hf]) + rs;
    }
  }
  return __any_sync(0xffffffffu, grow);
}

// One kv tile, second half: O *= corr per row, after softmax_exponentiate reported a moved max.
template <int MT, int ND>
__device__ __forceinline__ void rescale_output(float (&o)[MT][ND][4], const float (&corr)[MT][2]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int nd = 0; nd < ND; ++nd) {
      o[mt][nd][0] *= corr[mt][0];
      o[mt][nd][1] *= corr[mt][0];
      o[mt][nd][2] *= corr[mt][1];
      o[mt][nd][3] *= corr[mt][1];
    }
  }
}

// Both halves, for kernels that wait for PV before the next tile's softmax.
template <int MT, int NN, int ND>
__device__ __forceinline__ void online_softmax_step(float (&s)[MT][NN][4], float (&o)[MT][ND][4],
                                                    float (&m_run)[MT][2], float (&l_run)[MT][2], float factor) {
  float corr[MT][2];
  if (softmax_exponentiate(s, m_run, l_run, corr, factor)) rescale_output(o, corr);
}

// P to 16-bit operands: the C layout of two n8 tiles is the A layout of one k16 step, so
// p[kn][mt] is the A fragment of keys 16kn .. 16kn + 15 for m16 tile mt.
template <bool kBf16, int MT, int NN>
__device__ __forceinline__ void pack_probabilities(const float (&s)[MT][NN][4], unsigned (&p)[NN / 2][MT][4]) {
#pragma unroll
  for (int kn = 0; kn < NN / 2; ++kn)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      p[kn][mt][0] = pack2<kBf16>(s[mt][2 * kn][0], s[mt][2 * kn][1]);
      p[kn][mt][1] = pack2<kBf16>(s[mt][2 * kn][2], s[mt][2 * kn][3]);
      p[kn][mt][2] = pack2<kBf16>(s[mt][2 * kn + 1][0], s[mt][2 * kn + 1][1]);
      p[kn][mt][3] = pack2<kBf16>(s[mt][2 * kn + 1][2], s[mt][2 * kn + 1][3]);
    }
}

// The end of a row: its normaliser (multiply O by it; 0 for a row with nothing kept) and its
// log-sum-exp in natural log (-inf for a row with nothing kept). l_partial is this thread's share
// of the row sum, m the running max (log2 domain); sink2 the learned sink in the log2 domain,
// one more logit in the denominator with no value vector.
// finish_row_sum: the same from the whole row sum l.
template <bool kHasSink>
__device__ __forceinline__ float finish_row_sum(float l, float m, float sink2, float& lse) {
  float oscale = 1.f;
  if constexpr (kHasSink) {
    const float mf = fmax2(m, sink2);
    const float mb = mf == neg_inf() ? 0.f : mf;
    oscale = fast_exp2(m - mb);
    l = l * oscale + fast_exp2(sink2 - mb);
    m = mf;
  }
  // l > 0 implies a finite m (the max element contributes exp2(0) = 1). A NaN logit (a score mod
  // or input gave NaN) makes l NaN: fmax2 passed over it, but exp2 carried it into the sum. The
  // test is `l != 0`, not `l > 0` (false for NaN, which read such a row as fully masked), so NaN
  // reaches lse and O as PyTorch gives; same instruction count, only the comparison differs.
  const bool any = l != 0.f;
  lse = any ? (m + fast_log2(l)) * kLn2 : neg_inf();
  return any ? oscale / l : 0.f;
}
template <bool kHasSink>
__device__ __forceinline__ float finish_row(float l_partial, float m, float sink2, float& lse) {
  return finish_row_sum<kHasSink>(quad_sum(l_partial), m, sink2, lse);
}

}  // namespace detail
}  // namespace flexjit

#include "attention_reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace cpu_test {

using namespace flexjit;

namespace {

// Whether key j is in a block the block list selects for (b, h, query row i).
bool block_selected(const ir::Program& p, const ir::Env& env, int b, int h, int i, int j) {
  if (!p.block_indices) return true;
  auto it = env.tensors.find(p.block_indices->name);
  if (it == env.tensors.end()) return true;
  const ir::TensorBinding& t = it->second;  // contiguous int32 [B, H, nq, K] in these tests
  const std::int64_t nq = t.shape[2], K = t.shape[3];
  const int qb = i / p.block_indices->q_block, kb = j / p.block_indices->kv_block;
  for (std::int64_t k = 0; k < K; ++k) {
    std::int32_t v;
    std::memcpy(&v, static_cast<const char*>(t.data) + (((b * t.shape[1] + h) * nq + qb) * K + k) * 4, 4);
    if (v == kb) return true;
  }
  return false;
}

}  // namespace

ReferenceOutput reference_attention(const ir::Program& p, const cpu::CpuAttentionInputs& in) {
  static const ir::Env kNone;
  const ir::Env& env = in.bindings ? *in.bindings : kNone;
  const double scale = std::isnan(in.scale) ? 1.0 / std::sqrt(static_cast<double>(in.D)) : in.scale;
  const int group = in.Hq / in.Hkv;
  ReferenceOutput r;
  r.out.assign(static_cast<std::size_t>(in.B) * in.Hq * in.Tq * in.D, 0.0);
  r.lse.assign(static_cast<std::size_t>(in.B) * in.Hq * in.Tq, 0.0);
  std::vector<double> s(in.Tkv);
  for (int b = 0; b < in.B; ++b)
    for (int h = 0; h < in.Hq; ++h) {
      const int kvh = h / group;
      const double sink = ir::eval_sink(p, env, b, h);
      for (int i = 0; i < in.Tq; ++i) {
        const float* q = in.q + ((static_cast<std::size_t>(b) * in.Hq + h) * in.Tq + i) * in.D;
        double m = sink;
        for (int j = 0; j < in.Tkv; ++j) {
          s[j] = -std::numeric_limits<double>::infinity();
          if (!block_selected(p, env, b, h, i, j) || !ir::eval_mask(p, env, b, h, i, j)) continue;
          const float* k = in.k + ((static_cast<std::size_t>(b) * in.Hkv + kvh) * in.Tkv + j) * in.D;
          double dot = 0;
          for (int d = 0; d < in.D; ++d) dot += static_cast<double>(q[d]) * k[d];
          s[j] = ir::eval_score(p, env, b, h, i, j, static_cast<float>(scale * dot));  // mods see fp32
          m = std::max(m, s[j]);
        }
        const std::size_t row = (static_cast<std::size_t>(b) * in.Hq + h) * in.Tq + i;
        if (m == -std::numeric_limits<double>::infinity()) {
          r.lse[row] = m;  // out stays 0
          continue;
        }
        double l = std::exp(sink - m);
        for (int j = 0; j < in.Tkv; ++j) {
          const double pj = std::exp(s[j] - m);
          l += pj;
          const float* v = in.v + ((static_cast<std::size_t>(b) * in.Hkv + kvh) * in.Tkv + j) * in.D;
          for (int d = 0; d < in.D; ++d) r.out[row * in.D + d] += pj * v[d];
        }
        for (int d = 0; d < in.D; ++d) r.out[row * in.D + d] /= l;
        r.lse[row] = m + std::log(l);
      }
    }
  return r;
}

double relative_l2(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  if (den == 0) return std::sqrt(num);
  return std::sqrt(num / den);
}

}  // namespace cpu_test

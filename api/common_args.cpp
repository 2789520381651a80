#include "api/common_args.hpp"

#include <cmath>

namespace flexjit::api {

void fill_common_args(CommonArgs& a, const ForwardTensors& t, const float* lse, const AttentionShape& shape,
                      std::optional<float> scale, int head_dim, KvLayout kv) {
  a.q = t.q.data;
  a.k = t.k.data;
  a.v = t.v.data;
  a.o = t.out.data;
  a.lse = const_cast<float*>(lse);  // the forward writes it, the backward only reads it
  a.B = shape.B;
  a.Hq = shape.Hq;
  a.Hkv = shape.Hkv;
  a.Tq = shape.Tq;
  a.Tkv = shape.Tkv;
  const bool paged = kv == KvLayout::paged;
  a.q_b = t.q.stride(0), a.q_h = t.q.stride(1), a.q_t = t.q.stride(2);
  a.k_b = t.k.stride(0), a.k_h = t.k.stride(paged ? 2 : 1), a.k_t = t.k.stride(paged ? 1 : 2);
  a.v_b = t.v.stride(0), a.v_h = t.v.stride(paged ? 2 : 1), a.v_t = t.v.stride(paged ? 1 : 2);
  a.o_b = t.out.stride(0), a.o_h = t.out.stride(1), a.o_t = t.out.stride(2);
  a.scale = scale ? *scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
  a.scale_log2 = a.scale * kLog2e;
}

}  // namespace flexjit::api

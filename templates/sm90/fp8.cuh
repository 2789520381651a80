// flexjit: what the Hopper forward needs for FP8 E4M3 q, k and v (Cfg::kIsFp8, sm90/attention_fwd.cuh).
//
// wgmma takes FP8 operands K-major only, and its register A operand holds 8-bit elements in
// another order than the fp32 accumulator of S:
//   - P V multiplies along the keys, so V must have the keys contiguous: the pre-pass
//     transpose_v_e4m3 writes v transposed, [B, Hkv, Dv, vt_keys] bytes (AttnArgs::vt), which the
//     main kernel loads by TMA like K (Dv rows of 128 keys, one 128-byte swizzle row each);
//   - a thread's accumulator holds keys 2t, 2t + 1, 8 + 2t, 9 + 2t of each 16 (m16n8 layout, t =
//     lane % 4), where the A fragment of m64nNk32 wants positions 4t .. 4t + 3. Instead of moving
//     bytes between lanes, the pre-pass stores the keys of each 16 in that order: position p of a
//     group holds key vt_key_of_position(p), so the probabilities go into A as they lie and the
//     sum over keys is the same.
#pragma once

#include "common/attention_common.cuh"
#include "common/tile_config.cuh"
#include "sm90/tiles.cuh"

namespace flexjit {
namespace sm90 {

// The key (within its group of 16) that position p of v transposed holds: positions 4t .. 4t + 3
// take keys 2t, 2t + 1, 2t + 8, 2t + 9.
__host__ __device__ constexpr int vt_key_of_position(int p) { return 2 * (p >> 2) + (p & 1) + 8 * ((p >> 1) & 1); }

// Four probabilities as the bytes of one register, lowest first (round to nearest even,
// saturating: a probability is at most 1).
__device__ __forceinline__ unsigned pack4_e4m3(float a, float b, float c, float d) {
  unsigned short lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(b), "f"(a));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(d), "f"(c));
  return static_cast<unsigned>(lo) | (static_cast<unsigned>(hi) << 16);
}

}  // namespace sm90

namespace detail {

// The probabilities of one S tile (fp32, m16n8 layout: s[nt] holds columns 8 nt + 2t, + 1 of rows
// g and g + 8) as the A operand of each 32-key step of P V: registers 0 and 1 hold positions
// 4t .. 4t + 3 of the step's first 16 keys (rows g, g + 8), registers 2 and 3 of its second 16.
template <int NN>
__device__ __forceinline__ void pack_probabilities_e4m3(const float (&s)[1][NN][4], unsigned (&p)[NN / 4][1][4]) {
#pragma unroll
  for (int kn = 0; kn < NN / 4; ++kn) {
    const float(&a)[4] = s[0][4 * kn];
    const float(&b)[4] = s[0][4 * kn + 1];
    const float(&c)[4] = s[0][4 * kn + 2];
    const float(&d)[4] = s[0][4 * kn + 3];
    p[kn][0][0] = sm90::pack4_e4m3(a[0], a[1], b[0], b[1]);
    p[kn][0][1] = sm90::pack4_e4m3(a[2], a[3], b[2], b[3]);
    p[kn][0][2] = sm90::pack4_e4m3(c[0], c[1], d[0], d[1]);
    p[kn][0][3] = sm90::pack4_e4m3(c[2], c[3], d[2], d[3]);
  }
}

// The descale factor of (b, kv head hk) (1 without one).
__device__ __forceinline__ float descale_of(const AttnArgs& a, const float* factors, int b, int hk) {
  return factors == nullptr ? 1.f : __ldg(factors + static_cast<i64>(b) * a.descale_b + static_cast<i64>(hk) * a.descale_h);
}

}  // namespace detail

// The pre-pass: v [B, Hkv, Tkv, Dv] (e4m3, last dim contiguous) into AttnArgs::vt [B, Hkv, Dv,
// vt_keys], each group of 16 keys in sm90::vt_key_of_position's order and the keys past Tkv zero.
// Grid (ceil(vt_keys / kFp8TransposeKeys), Hkv, B), kFp8TransposeThreads threads: a CTA reads its
// keys' rows in 16-byte vectors into shared memory and writes each of the Dv rows' 16-key groups
// as one 16-byte vector.
template <class Cfg>
__device__ __forceinline__ void transpose_v_e4m3(const AttnArgs& a) {
  constexpr int DV = value_head_dim<Cfg>(0);
  constexpr int KEYS = sm90::kFp8TransposeKeys;
  constexpr int kThreads = sm90::kFp8TransposeThreads;
  constexpr int G = sm90::kFp8KeyGroup;
  static_assert(G == 16 && KEYS % G == 0, "vt_key_of_position orders 16 keys; a CTA takes whole groups");
  constexpr int kPitch = DV + 16;  // a row's bytes in shared memory: neighbouring rows start 16 banks apart
  __shared__ __align__(16) unsigned char rows[KEYS * kPitch];
  const int k0 = blockIdx.x * KEYS, hk = blockIdx.y, b = blockIdx.z;
  const unsigned char* v =
      static_cast<const unsigned char*>(a.v) + static_cast<i64>(b) * a.v_b + static_cast<i64>(hk) * a.v_h;
  for (int i = threadIdx.x; i < KEYS * (DV / 16); i += kThreads) {
    const int r = i / (DV / 16), c = (i % (DV / 16)) * 16;
    uint4 x = make_uint4(0u, 0u, 0u, 0u);
    if (k0 + r < a.Tkv) x = __ldg(reinterpret_cast<const uint4*>(v + static_cast<i64>(k0 + r) * a.v_t + c));
    *reinterpret_cast<uint4*>(rows + r * kPitch + c) = x;
  }
  __syncthreads();
  unsigned char* vt = static_cast<unsigned char*>(a.vt) + (static_cast<i64>(b) * a.Hkv + hk) * DV * a.vt_keys;
  for (int i = threadIdx.x; i < DV * (KEYS / G); i += kThreads) {
    const int group = i % (KEYS / G), d = i / (KEYS / G);
    const int p0 = k0 + group * G;
    if (p0 >= a.vt_keys) continue;
    unsigned w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      unsigned x = 0;
#pragma unroll
      for (int e = 0; e < 4; ++e)
        x |= static_cast<unsigned>(rows[(group * G + sm90::vt_key_of_position(4 * j + e)) * kPitch + d]) << (8 * e);
      w[j] = x;
    }
    *reinterpret_cast<uint4*>(vt + static_cast<i64>(d) * a.vt_keys + p0) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

}  // namespace flexjit

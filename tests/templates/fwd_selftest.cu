// GPU self-test and benchmark of templates/sm80/attention_fwd.cuh against a float64 CPU reference.
//
// Build (scripts/gpu-template-selftest does this, splitting the kernels over parallel compiles):
//   nvcc -O3 -std=c++20 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I<repo> fwd_selftest.cu
// One translation unit builds everything; with -DFJ_PART=k only the kernels of part k (0..kParts-1)
// are built, and -DFJ_PART=99 builds only main(); the parts register themselves at static-init time.
//
// Usage: fwd_selftest [--small] [--no-bench] [--no-sweep] [--reps N] [--dims 64,128] [--types bf16]
//   --small     a handful of small cases (for compute-sanitizer)
//   --dims, --types  restrict the correctness matrix
//   --no-bench  correctness only
//   --no-sweep  benchmark only the default configs
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "templates/sm80/attention_fwd.cuh"
#include "tests/templates/test_mods.cuh"

#ifndef FJ_PART
#define FJ_PART -1
#endif
#define FJ_BUILD_PART(k) (FJ_PART < 0 || FJ_PART == (k))
#define FJ_BUILD_MAIN (FJ_PART < 0 || FJ_PART == 99)

using flexjit::AttnArgs;
using flexjit::bf16_t;
using flexjit::fp16_t;
using flexjit::FwdConfig;
using flexjit::DefaultFwdConfig;
using namespace flexjit_test;
using i64 = long long;

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t err_ = (x);                                                                        \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

// ---------------------------------------------------------------------------------------------
// The kernel wrapper the generator would emit (templated here so one file covers every variant).
template <class Mods, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
    fwd_kernel(const __grid_constant__ AttnArgs args, const __grid_constant__ typename Mods::Params params) {
  flexjit::attention_fwd_sm80<Mods, Cfg>(args, params);
}

// ---------------------------------------------------------------------------------------------
// Host helpers.
inline uint16_t f2e(float x, bool bf16) {
  uint16_t r;
  if (bf16) {
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    std::memcpy(&r, &h, 2);
  } else {
    __half h = __float2half_rn(x);
    std::memcpy(&r, &h, 2);
  }
  return r;
}
inline float e2f(uint16_t x, bool bf16) {
  if (bf16) {
    __nv_bfloat16 h;
    std::memcpy(&h, &x, 2);
    return __bfloat162float(h);
  }
  __half h;
  std::memcpy(&h, &x, 2);
  return __half2float(h);
}

struct Case {
  std::string mods;
  int B, Hq, Hkv, Tq, Tkv, D;
  bool bf16;
  bool bshd;         // [B, T, H, D] layouts instead of [B, H, T, D]
  float qscale = 1;  // spread of the logits
  int window = 256;
};

struct Result {
  double rel = 0, lse_err = 0;
  long masked_rows = 0;
  bool ok = false;
  std::string why;
  std::string cfg;
};

// Per-head captured tensors (ALiBi slopes, sink logits), host and device copies.
struct Aux {
  std::vector<float> slopes, sinks;
  float* d_slopes = nullptr;
  float* d_sinks = nullptr;
};

template <class M> typename M::Params make_params(const Case& c, const Aux& a, bool host);
template <> inline DenseMods::Params make_params<DenseMods>(const Case&, const Aux&, bool) { return {0}; }
template <> inline CausalMods::Params make_params<CausalMods>(const Case&, const Aux&, bool) { return {0}; }
template <> inline WindowAlibiMods::Params make_params<WindowAlibiMods>(const Case& c, const Aux& a, bool host) {
  return {host ? a.slopes.data() : a.d_slopes, c.window};
}
template <> inline SoftcapCausalMods::Params make_params<SoftcapCausalMods>(const Case&, const Aux&, bool) {
  return {20.f};
}
template <> inline SinkWindowMods::Params make_params<SinkWindowMods>(const Case& c, const Aux& a, bool host) {
  return {host ? a.sinks.data() : a.d_sinks, c.window};
}
template <> inline DenseSinkMods::Params make_params<DenseSinkMods>(const Case&, const Aux& a, bool host) {
  return {host ? a.sinks.data() : a.d_sinks};
}
template <> inline HoleyMods::Params make_params<HoleyMods>(const Case&, const Aux&, bool) { return {150}; }
template <> inline StripeMods::Params make_params<StripeMods>(const Case&, const Aux&, bool) { return {32}; }

// Run fn(i) for i in [0, n) over all host cores.
template <class F>
void parallel_for(int n, F fn) {
  const int nt = std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
  std::atomic<int> next{0};
  std::vector<std::thread> th;
  for (int i = 0; i < nt; ++i)
    th.emplace_back([&] {
      for (int j; (j = next.fetch_add(1)) < n;) fn(j);
    });
  for (auto& x : th) x.join();
}

// Tile-classifier sanity (brute force over one (b, h)): a tile outside the kv range or EMPTY must be
// fully masked, a FULL tile fully kept. Catches bugs in the hand-written test Mods themselves.
template <class Mods>
std::string check_classifier(const typename Mods::Params& hp, int Tq, int Tkv, int BM, int BN) {
  if constexpr (!Mods::kHasMask) return "";
  for (int q0 = 0; q0 < Tq; q0 += BM) {
    const int q1 = std::min(q0 + BM, Tq);
    int lo = 0, hi = Tkv;
    Mods::kv_range(hp, 0, 0, q0, q1, Tkv, &lo, &hi);
    for (int k0 = 0; k0 < Tkv; k0 += BN) {
      const int k1 = std::min(k0 + BN, Tkv);
      const int cls = Mods::classify(hp, 0, 0, q0, q1, k0, k1);
      for (int q = q0; q < q1; ++q)
        for (int kv = k0; kv < k1; ++kv) {
          const bool keep = Mods::mask(hp, 0, 0, q, kv);
          if (keep && (kv < lo || kv >= hi)) return "kv_range drops a kept element";
          if (keep && cls == flexjit::EMPTY) return "EMPTY tile with a kept element";
          if (!keep && cls == flexjit::FULL) return "FULL tile with a masked element";
        }
    }
  }
  return "";
}

struct Buffers {
  std::vector<uint16_t> hq, hk, hv;  // element bits, in the case's layout
  std::vector<float> fq, fk, fv;     // the same values as floats, [B, H, T, D]
  uint16_t *dq = nullptr, *dk = nullptr, *dv = nullptr, *dout = nullptr;
  float* dlse = nullptr;
  size_t out_elems = 0;
  AttnArgs args{};
};

inline void free_buffers(Buffers& bf) {
  CK(cudaFree(bf.dq));
  CK(cudaFree(bf.dk));
  CK(cudaFree(bf.dv));
  CK(cudaFree(bf.dout));
  CK(cudaFree(bf.dlse));
}

// Random inputs and device buffers. BHSD outputs get 64 spare rows per head that must stay poisoned
// (checks that rows >= Tq are never written).
inline void make_buffers(const Case& c, Buffers& bf, uint64_t seed, bool keep_host_floats) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto fill = [&](std::vector<uint16_t>& bits, std::vector<float>& fl, int H, int T, float sc, i64* sb, i64* sh,
                  i64* st) {
    const size_t n = static_cast<size_t>(c.B) * H * T * c.D;
    bits.assign(n, 0);
    if (keep_host_floats) fl.assign(n, 0.f);
    if (c.bshd) {
      *sb = static_cast<i64>(T) * H * c.D, *sh = c.D, *st = static_cast<i64>(H) * c.D;
    } else {
      *sb = static_cast<i64>(H) * T * c.D, *sh = static_cast<i64>(T) * c.D, *st = c.D;
    }
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t)
          for (int d = 0; d < c.D; ++d) {
            const uint16_t e = f2e(nd(rng) * sc, c.bf16);
            bits[b * *sb + h * *sh + t * *st + d] = e;
            if (keep_host_floats) fl[((static_cast<size_t>(b) * H + h) * T + t) * c.D + d] = e2f(e, c.bf16);
          }
  };
  AttnArgs& a = bf.args;
  fill(bf.hq, bf.fq, c.Hq, c.Tq, c.qscale, &a.q_b, &a.q_h, &a.q_t);
  fill(bf.hk, bf.fk, c.Hkv, c.Tkv, 1.f, &a.k_b, &a.k_h, &a.k_t);
  fill(bf.hv, bf.fv, c.Hkv, c.Tkv, 1.f, &a.v_b, &a.v_h, &a.v_t);
  const int Tpad = c.bshd ? c.Tq : c.Tq + 64;
  if (c.bshd) {
    a.o_b = static_cast<i64>(c.Tq) * c.Hq * c.D, a.o_h = c.D, a.o_t = static_cast<i64>(c.Hq) * c.D;
  } else {
    a.o_b = static_cast<i64>(c.Hq) * Tpad * c.D, a.o_h = static_cast<i64>(Tpad) * c.D, a.o_t = c.D;
  }
  bf.out_elems = static_cast<size_t>(c.B) * c.Hq * Tpad * c.D;
  auto up = [](const std::vector<uint16_t>& h, uint16_t** d) {
    CK(cudaMalloc(d, h.size() * 2));
    CK(cudaMemcpy(*d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  };
  up(bf.hq, &bf.dq);
  up(bf.hk, &bf.dk);
  up(bf.hv, &bf.dv);
  CK(cudaMalloc(&bf.dout, bf.out_elems * 2));
  CK(cudaMalloc(&bf.dlse, static_cast<size_t>(c.B) * c.Hq * c.Tq * 4));
  a.q = bf.dq, a.k = bf.dk, a.v = bf.dv, a.o = bf.dout, a.lse = bf.dlse;
  a.B = c.B, a.Hq = c.Hq, a.Hkv = c.Hkv, a.Tq = c.Tq, a.Tkv = c.Tkv;
  a.scale = 1.f / std::sqrt(static_cast<float>(c.D));
  a.scale_log2 = a.scale * 1.4426950408889634f;
}

template <class Mods, class Cfg>
void launch(const AttnArgs& a, const typename Mods::Params& p, cudaStream_t st = 0) {
  static bool attr_done = false;
  if (!attr_done) {
    CK(cudaFuncSetAttribute(fwd_kernel<Mods, Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
    attr_done = true;
  }
  const dim3 grid((a.Tq + Cfg::kBlockM - 1) / Cfg::kBlockM, a.Hq, a.B);
  fwd_kernel<Mods, Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, st>>>(a, p);
  CK(cudaGetLastError());
}

template <class Cfg>
std::string cfg_name() {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%dx%d w%d s%d %s %dKB", Cfg::kBlockM, Cfg::kBlockN, Cfg::kWarps, Cfg::kStages,
                Cfg::kQInRegs ? "qreg" : "qsmem", (Cfg::kSmemBytes + 1023) / 1024);
  return buf;
}

// One correctness case: random inputs, NaN-poisoned outputs, float64 reference with the same hooks.
template <class Mods, class Cfg>
Result run_case(const Case& c) {
  Result res;
  res.cfg = cfg_name<Cfg>();
  Buffers bf;
  make_buffers(c, bf, 1234567u + c.Tq * 31u + c.Tkv * 17u + c.D + c.Hq * 7u + (c.bf16 ? 1 : 0), true);
  Aux aux;
  std::mt19937 rng(42 + c.Tq);
  std::uniform_real_distribution<float> ud(-2.f, 4.f);
  for (int h = 0; h < c.Hq; ++h) {
    aux.slopes.push_back(std::exp2(-8.f * (h + 1) / c.Hq));
    aux.sinks.push_back(ud(rng));
  }
  CK(cudaMalloc(&aux.d_slopes, c.Hq * 4));
  CK(cudaMalloc(&aux.d_sinks, c.Hq * 4));
  CK(cudaMemcpy(aux.d_slopes, aux.slopes.data(), c.Hq * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(aux.d_sinks, aux.sinks.data(), c.Hq * 4, cudaMemcpyHostToDevice));
  const auto dp = make_params<Mods>(c, aux, false);
  const auto hp = make_params<Mods>(c, aux, true);

  res.why = check_classifier<Mods>(hp, c.Tq, c.Tkv, Cfg::kBlockM, Cfg::kBlockN);

  // Poison: 0xFFFF is a NaN in bf16 and fp16, 0xFFFFFFFF a NaN in fp32.
  CK(cudaMemset(bf.dout, 0xFF, bf.out_elems * 2));
  CK(cudaMemset(bf.dlse, 0xFF, static_cast<size_t>(c.B) * c.Hq * c.Tq * 4));
  launch<Mods, Cfg>(bf.args, dp);
  CK(cudaDeviceSynchronize());
  std::vector<uint16_t> out(bf.out_elems);
  std::vector<float> lse(static_cast<size_t>(c.B) * c.Hq * c.Tq);
  CK(cudaMemcpy(out.data(), bf.dout, out.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(lse.data(), bf.dlse, lse.size() * 4, cudaMemcpyDeviceToHost));

  // Reference, one (b, h) per task.
  const int nbh = c.B * c.Hq;
  std::vector<double> num(nbh, 0), den(nbh, 0), lerr(nbh, 0);
  std::vector<long> masked(nbh, 0), bad(nbh, 0);
  std::vector<std::string> bad_why(nbh);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.D));
  const AttnArgs& a = bf.args;
  parallel_for(nbh, [&](int bh) {
    const int b = bh / c.Hq, h = bh % c.Hq, hk = h / (c.Hq / c.Hkv);
    std::vector<double> s(c.Tkv), acc(c.D);
    const float* K = &bf.fk[(static_cast<size_t>(b) * c.Hkv + hk) * c.Tkv * c.D];
    const float* V = &bf.fv[(static_cast<size_t>(b) * c.Hkv + hk) * c.Tkv * c.D];
    for (int i = 0; i < c.Tq; ++i) {
      const float* Q = &bf.fq[((static_cast<size_t>(b) * c.Hq + h) * c.Tq + i) * c.D];
      double mx = -INFINITY;
      for (int j = 0; j < c.Tkv; ++j) {
        if (Mods::kHasMask && !Mods::mask(hp, b, h, i, j)) {
          s[j] = -INFINITY;
          continue;
        }
        double dot = 0;
        for (int d = 0; d < c.D; ++d) dot += static_cast<double>(Q[d]) * K[static_cast<size_t>(j) * c.D + d];
        double x = scale * dot;
        if (Mods::kHasScoreMod) x = Mods::score(hp, static_cast<float>(x), b, h, i, j);
        s[j] = x;
        mx = std::max(mx, x);
      }
      double sink = -INFINITY;
      if (Mods::kHasSink) {
        sink = Mods::sink(hp, b, h);
        mx = std::max(mx, sink);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double sum = 0;
      if (mx != -INFINITY) {
        for (int j = 0; j < c.Tkv; ++j) {
          if (s[j] == -INFINITY) continue;
          const double pj = std::exp(s[j] - mx);
          sum += pj;
          for (int d = 0; d < c.D; ++d) acc[d] += pj * V[static_cast<size_t>(j) * c.D + d];
        }
        if (Mods::kHasSink) sum += std::exp(sink - mx);
      }
      const bool row_masked = sum == 0;
      const double ref_lse = row_masked ? -INFINITY : mx + std::log(sum);
      const float got_lse = lse[static_cast<size_t>(bh) * c.Tq + i];
      const uint16_t* orow = &out[b * a.o_b + h * a.o_h + static_cast<i64>(i) * a.o_t];
      if (row_masked) {
        ++masked[bh];
        if (!(std::isinf(got_lse) && got_lse < 0)) {
          ++bad[bh];
          bad_why[bh] = "masked row lse " + std::to_string(got_lse) + " row " + std::to_string(i);
        }
        for (int d = 0; d < c.D; ++d)
          if (e2f(orow[d], c.bf16) != 0.f) {
            ++bad[bh];
            bad_why[bh] = "masked row output not 0 at row " + std::to_string(i);
            break;
          }
        continue;
      }
      if (!std::isfinite(got_lse)) {
        ++bad[bh];
        bad_why[bh] = "lse not finite at row " + std::to_string(i);
      } else {
        lerr[bh] = std::max(lerr[bh], std::abs(got_lse - ref_lse));
      }
      for (int d = 0; d < c.D; ++d) {
        const double r = acc[d] / sum;
        const float g = e2f(orow[d], c.bf16);
        if (!std::isfinite(g)) {
          ++bad[bh];
          bad_why[bh] = "non-finite output at row " + std::to_string(i);
          break;
        }
        num[bh] += (g - r) * (g - r);
        den[bh] += r * r;
      }
    }
    // Rows beyond Tq (BHSD padding) must still hold the poison.
    if (!c.bshd) {
      for (int i = c.Tq; i < c.Tq + 64; ++i) {
        const uint16_t* orow = &out[b * a.o_b + h * a.o_h + static_cast<i64>(i) * a.o_t];
        for (int d = 0; d < c.D; ++d)
          if (orow[d] != 0xFFFF) {
            ++bad[bh];
            bad_why[bh] = "row >= Tq was written";
            break;
          }
      }
    }
  });
  double tn = 0, td = 0;
  long tbad = 0;
  for (int i = 0; i < nbh; ++i) {
    tn += num[i], td += den[i], tbad += bad[i], res.masked_rows += masked[i];
    res.lse_err = std::max(res.lse_err, lerr[i]);
    if (bad[i] && res.why.empty()) res.why = bad_why[i];
  }
  res.rel = td > 0 ? std::sqrt(tn / td) : 0;
  const double tol = c.bf16 ? 2e-2 : 5e-3;
  res.ok = res.why.empty() && tbad == 0 && res.rel <= tol && res.lse_err <= 1e-2;
  if (res.why.empty() && !res.ok) res.why = "tolerance";
  free_buffers(bf);
  CK(cudaFree(aux.d_slopes));
  CK(cudaFree(aux.d_sinks));
  return res;
}

// Benchmark inputs are generated on the device (hash -> uniform with unit variance): host RNG for
// 3 x 64 MB tensors per benchmark would dominate the lease. Never zeros (they time differently).
template <int kUnused = 0>  // a template: every part may instantiate it without clashing
__global__ void init_random(uint16_t* p, size_t n, uint32_t seed, bool bf16) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA77u;
    x ^= x >> 16, x *= 0x7FEB352Du, x ^= x >> 15, x *= 0x846CA68Bu, x ^= x >> 16;
    const float u = (static_cast<float>(x >> 8) * (1.f / 16777216.f) * 2.f - 1.f) * 1.7320508f;
    if (bf16) {
      const __nv_bfloat16 h = __float2bfloat16_rn(u);
      p[i] = *reinterpret_cast<const uint16_t*>(&h);
    } else {
      const __half h = __float2half_rn(u);
      p[i] = *reinterpret_cast<const uint16_t*>(&h);
    }
  }
}

inline void make_device_buffers(const Case& c, Buffers& bf) {
  AttnArgs& a = bf.args;
  const size_t nq = static_cast<size_t>(c.B) * c.Hq * c.Tq * c.D, nk = static_cast<size_t>(c.B) * c.Hkv * c.Tkv * c.D;
  CK(cudaMalloc(&bf.dq, nq * 2));
  CK(cudaMalloc(&bf.dk, nk * 2));
  CK(cudaMalloc(&bf.dv, nk * 2));
  CK(cudaMalloc(&bf.dout, nq * 2));
  CK(cudaMalloc(&bf.dlse, static_cast<size_t>(c.B) * c.Hq * c.Tq * 4));
  init_random<><<<1024, 256>>>(bf.dq, nq, 1u, c.bf16);
  init_random<><<<1024, 256>>>(bf.dk, nk, 2u, c.bf16);
  init_random<><<<1024, 256>>>(bf.dv, nk, 3u, c.bf16);
  CK(cudaGetLastError());
  bf.out_elems = nq;
  a.q = bf.dq, a.k = bf.dk, a.v = bf.dv, a.o = bf.dout, a.lse = bf.dlse;
  a.B = c.B, a.Hq = c.Hq, a.Hkv = c.Hkv, a.Tq = c.Tq, a.Tkv = c.Tkv;
  a.q_b = static_cast<i64>(c.Hq) * c.Tq * c.D, a.q_h = static_cast<i64>(c.Tq) * c.D, a.q_t = c.D;
  a.o_b = a.q_b, a.o_h = a.q_h, a.o_t = a.q_t;
  a.k_b = static_cast<i64>(c.Hkv) * c.Tkv * c.D, a.k_h = static_cast<i64>(c.Tkv) * c.D, a.k_t = c.D;
  a.v_b = a.k_b, a.v_h = a.k_h, a.v_t = a.k_t;
  a.scale = 1.f / std::sqrt(static_cast<float>(c.D));
  a.scale_log2 = a.scale * 1.4426950408889634f;
}

// Timing: median of `reps` event-timed launches after warm-up. Returns milliseconds.
template <class Mods, class Cfg>
double bench_case(const Case& c, int reps) {
  Buffers bf;
  make_device_buffers(c, bf);
  Aux aux;
  const auto dp = make_params<Mods>(c, aux, false);
  CK(cudaMemset(bf.dout, 0xFF, bf.out_elems * 2));
  for (int i = 0; i < 3; ++i) launch<Mods, Cfg>(bf.args, dp);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0));
    launch<Mods, Cfg>(bf.args, dp);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  // Output must be finite everywhere (dense/causal never mask a whole row).
  std::vector<uint16_t> out(bf.out_elems);
  CK(cudaMemcpy(out.data(), bf.dout, out.size() * 2, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < out.size(); i += 97)
    if (!std::isfinite(e2f(out[i], c.bf16))) {
      std::fprintf(stderr, "bench: non-finite output\n");
      std::exit(1);
    }
  free_buffers(bf);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// ---------------------------------------------------------------------------------------------
// Registry of compiled (Mods, Cfg) pairs, filled by the parts below.
struct Entry {
  std::string mods;
  int D;
  bool bf16;
  std::string tag;  // "default" or a sweep label
  std::string cfg;
  Result (*run)(const Case&);
  double (*bench)(const Case&, int);
};
inline std::vector<Entry>& registry() {
  static std::vector<Entry> r;
  return r;
}
template <class Mods, class Cfg>
int reg(const char* mods, const char* tag) {
  registry().push_back({mods, Cfg::kHeadDim, Cfg::kIsBf16, tag, cfg_name<Cfg>(), &run_case<Mods, Cfg>,
                        &bench_case<Mods, Cfg>});
  return 0;
}

#define FJ_REG_ALL_MODS(D, E)                                                              \
  reg<DenseMods, DefaultFwdConfig<D, E>>("dense", "default"),                              \
      reg<CausalMods, DefaultFwdConfig<D, E>>("causal", "default"),                        \
      reg<WindowAlibiMods, DefaultFwdConfig<D, E>>("window_alibi", "default"),             \
      reg<SoftcapCausalMods, DefaultFwdConfig<D, E>>("softcap", "default"),                \
      reg<SinkWindowMods, DefaultFwdConfig<D, E>>("sink_window", "default"),               \
      reg<DenseSinkMods, DefaultFwdConfig<D, E>>("dense_sink", "default"),                 \
      reg<HoleyMods, DefaultFwdConfig<D, E>>("holey", "default"),                          \
      reg<StripeMods, DefaultFwdConfig<D, E>>("stripe", "default")

#if FJ_BUILD_PART(0)
static int part0[] = {FJ_REG_ALL_MODS(64, bf16_t), FJ_REG_ALL_MODS(64, fp16_t)};
#endif
#if FJ_BUILD_PART(1)
static int part1[] = {FJ_REG_ALL_MODS(128, bf16_t), FJ_REG_ALL_MODS(128, fp16_t)};
#endif
#if FJ_BUILD_PART(2)
static int part2[] = {FJ_REG_ALL_MODS(256, bf16_t), FJ_REG_ALL_MODS(256, fp16_t)};
#endif
#if FJ_BUILD_PART(3)
static int part3[] = {FJ_REG_ALL_MODS(96, bf16_t), FJ_REG_ALL_MODS(96, fp16_t)};
#endif
// Sweep candidates (bf16, dense + causal) next to the defaults: here the 3-stage variants of D = 64 / 128.
#define FJ_SWEEP(label, ...)                                     \
  reg<DenseMods, FwdConfig<__VA_ARGS__>>("dense", label),        \
      reg<CausalMods, FwdConfig<__VA_ARGS__>>("causal", label)
#if FJ_BUILD_PART(4)
static int part4[] = {FJ_SWEEP("s3", 128, 128, 32, 4, 3, bf16_t, false, 2)};
#endif
// D = 64 alternatives: "alt" runs the whole correctness matrix like the default.
#define FJ_REG_ALL_MODS_CFG(tag, ...)                                                  \
  reg<DenseMods, FwdConfig<__VA_ARGS__>>("dense", tag),                                \
      reg<CausalMods, FwdConfig<__VA_ARGS__>>("causal", tag),                          \
      reg<WindowAlibiMods, FwdConfig<__VA_ARGS__>>("window_alibi", tag),               \
      reg<SoftcapCausalMods, FwdConfig<__VA_ARGS__>>("softcap", tag),                  \
      reg<SinkWindowMods, FwdConfig<__VA_ARGS__>>("sink_window", tag),                 \
      reg<DenseSinkMods, FwdConfig<__VA_ARGS__>>("dense_sink", tag),                   \
      reg<HoleyMods, FwdConfig<__VA_ARGS__>>("holey", tag),                            \
      reg<StripeMods, FwdConfig<__VA_ARGS__>>("stripe", tag)
#if FJ_BUILD_PART(5)
static int part5[] = {FJ_REG_ALL_MODS_CFG("alt", 64, 128, 32, 4, 2, bf16_t, true, 2),
                      FJ_REG_ALL_MODS_CFG("alt", 64, 128, 32, 4, 2, fp16_t, true, 2),
                      FJ_SWEEP("qreg", 64, 128, 64, 4, 2, bf16_t, true, 2)};
#endif

#if FJ_BUILD_MAIN
static const Entry* find(const std::string& mods, int D, bool bf16, const std::string& tag) {
  for (const auto& e : registry())
    if (e.mods == mods && e.D == D && e.bf16 == bf16 && e.tag == tag) return &e;
  return nullptr;
}

int main(int argc, char** argv) {
  bool small = false, bench = true, sweep = true;
  int reps = 30;
  std::string only_dims, only_types;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--small") small = true;
    else if (a == "--no-bench") bench = false;
    else if (a == "--no-sweep") sweep = false;
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--dims" && i + 1 < argc) only_dims = "," + std::string(argv[++i]) + ",";
    else if (a == "--types" && i + 1 < argc) only_types = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--small] [--no-bench] [--no-sweep] [--reps N] [--dims 64,128] [--types bf16|fp16]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, sm_%d%d, smem/block optin %zu KB\n", prop.name, prop.multiProcessorCount,
              prop.major, prop.minor, prop.sharedMemPerBlockOptin / 1024);

  // ---- correctness
  struct Shape {
    const char* mods;
    int B, Hq, Hkv, Tq, Tkv;
    bool bshd;
    float qscale;
  };
  std::vector<Shape> shapes;
  if (small) {
    shapes = {{"dense", 1, 2, 1, 17, 130, false, 1}, {"causal", 1, 2, 2, 77, 77, false, 1},
              {"window_alibi", 1, 1, 1, 130, 300, true, 1}, {"sink_window", 1, 2, 1, 40, 200, false, 1},
              {"holey", 1, 1, 1, 200, 190, false, 1}, {"stripe", 1, 1, 1, 300, 600, false, 1}};
  } else {
    shapes = {
        {"dense", 2, 3, 3, 17, 17, false, 1},        {"dense", 1, 2, 2, 1, 333, false, 1},
        {"dense", 2, 4, 2, 1000, 1000, false, 1},    {"dense", 1, 2, 1, 257, 1000, true, 2},
        {"causal", 2, 4, 2, 1000, 1000, false, 1},   {"causal", 1, 2, 2, 17, 130, true, 1},
        {"causal", 1, 2, 2, 300, 77, false, 3},      {"window_alibi", 1, 4, 4, 1000, 1000, false, 1},
        {"window_alibi", 2, 2, 1, 513, 700, true, 1}, {"softcap", 1, 4, 2, 1000, 1000, false, 4},
        {"sink_window", 1, 4, 4, 700, 700, false, 1}, {"dense_sink", 1, 4, 2, 1, 500, false, 1},
        {"dense_sink", 2, 2, 2, 333, 333, true, 1},  {"holey", 1, 2, 2, 1000, 1000, false, 1},
        {"holey", 1, 2, 1, 17, 17, false, 1},        {"stripe", 1, 2, 2, 1000, 1000, false, 1},
    };
  }
  const int dims[] = {64, 128, 256, 96};
  int n_fail = 0, n_run = 0;
  std::vector<std::string> fails;
  std::printf("\n%-13s %-4s %4s %-22s %-5s %-26s %10s %9s %6s %s\n", "mods", "type", "D", "B,Hq,Hkv,Tq,Tkv", "lay",
              "config", "rel_err", "lse_err", "masked", "result");
  for (int D : dims) {
    if (!only_dims.empty() && only_dims.find("," + std::to_string(D) + ",") == std::string::npos) continue;
    for (int bfi = 0; bfi < 2; ++bfi) {
      const bool bf16 = bfi == 0;
      if (!only_types.empty() && only_types != (bf16 ? "bf16" : "fp16")) continue;
      for (const auto& s : shapes) {
        if (!small && D == 256 && s.Tq * s.Tkv > 600000 && s.B * s.Hq > 4) continue;  // keep the CPU time sane
        for (const char* tag : {"default", "alt"}) {
        const Entry* e = find(s.mods, D, bf16, tag);
        if (!e) {
          if (std::string(tag) == "alt") continue;
          std::printf("missing entry %s D=%d\n", s.mods, D);
          ++n_fail;
          continue;
        }
        Case c{s.mods, s.B, s.Hq, s.Hkv, s.Tq, s.Tkv, D, bf16, s.bshd, s.qscale};
        const Result r = e->run(c);
        ++n_run;
        char shape[64];
        std::snprintf(shape, sizeof shape, "%d,%d,%d,%d,%d", s.B, s.Hq, s.Hkv, s.Tq, s.Tkv);
        std::printf("%-13s %-4s %4d %-22s %-5s %-26s %10.3e %9.2e %6ld %s%s%s\n", s.mods, bf16 ? "bf16" : "fp16", D,
                    shape, s.bshd ? "bshd" : "bhsd", r.cfg.c_str(), r.rel, r.lse_err, r.masked_rows,
                    r.ok ? "PASS" : "FAIL", r.ok ? "" : " : ", r.ok ? "" : r.why.c_str());
        std::fflush(stdout);
        if (!r.ok) {
          ++n_fail;
          fails.push_back(std::string(s.mods) + " D=" + std::to_string(D) + (bf16 ? " bf16 " : " fp16 ") + shape);
        }
        }  // tag
      }
    }
  }
  // Sweep configs are checked too (one mid-size case each) before they are timed.
  if (!small && sweep) {
    for (const auto& e : registry()) {
      if (e.tag == "default" || e.tag == "alt") continue;
      Case c{e.mods, 1, 2, 1, 1000, 1000, e.D, e.bf16, false, 1};
      const Result r = e.run(c);
      ++n_run;
      std::printf("%-13s %-4s %4d %-22s %-5s %-26s %10.3e %9.2e %6ld %s [sweep %s]\n", e.mods.c_str(), "bf16", e.D,
                  "1,2,1,1000,1000", "bhsd", r.cfg.c_str(), r.rel, r.lse_err, r.masked_rows, r.ok ? "PASS" : "FAIL",
                  e.tag.c_str());
      if (!r.ok) {
        ++n_fail;
        fails.push_back("sweep " + e.tag + " " + e.mods + " D=" + std::to_string(e.D));
      }
    }
  }

  // ---- timing
  struct BenchRow {
    std::string what, cfg;
    double ms, tfs;
  };
  std::vector<BenchRow> rows;
  if (bench && !small) {
    struct B {
      const char* mods;
      int Bn, H, T, D;
    };
    const B benches[] = {{"dense", 4, 16, 4096, 128}, {"causal", 4, 16, 4096, 128}, {"causal", 8, 16, 4096, 64}};
    for (const auto& bb : benches) {
      for (const auto& e : registry()) {
        if (e.mods != bb.mods || e.D != bb.D || !e.bf16) continue;
        if (e.tag != "default" && !sweep) continue;
        Case c{bb.mods, bb.Bn, bb.H, bb.H, bb.T, bb.T, bb.D, true, false, 1};
        const double ms = e.bench(c, reps);
        const double pairs = std::string(bb.mods) == "causal" ? 0.5 * bb.T * (bb.T + 1.0) : 1.0 * bb.T * bb.T;
        const double flops = 4.0 * bb.D * pairs * bb.Bn * bb.H;
        char what[96];
        std::snprintf(what, sizeof what, "%s B=%d H=%d T=%d D=%d %s", bb.mods, bb.Bn, bb.H, bb.T, bb.D,
                      e.tag == "default" ? "[default]" : ("[sweep " + e.tag + "]").c_str());
        rows.push_back({what, e.cfg, ms, flops / (ms * 1e-3) / 1e12});
        std::printf("bench %-48s %-26s %8.3f ms %7.1f TF/s\n", what, e.cfg.c_str(), ms, rows.back().tfs);
        std::fflush(stdout);
      }
    }
  }

  std::printf("\n==== summary ====\n");
  std::printf("correctness: %d cases, %d failed\n", n_run, n_fail);
  for (const auto& f : fails) std::printf("  FAIL %s\n", f.c_str());
  if (!rows.empty()) {
    std::printf("%-50s %-26s %9s %8s\n", "benchmark (bf16, TF/s = 4*D*unmasked pairs / t)", "config", "ms", "TF/s");
    for (const auto& r : rows) std::printf("%-50s %-26s %9.3f %8.1f\n", r.what.c_str(), r.cfg.c_str(), r.ms, r.tfs);
  }
  return n_fail == 0 ? 0 : 1;
}
#endif

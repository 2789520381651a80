// Hand-written Mods policies for the template tests: what the generator will emit, written by hand.
// Every hook is __host__ __device__ so the CPU reference evaluates exactly the same mask / score / sink,
// and so classify() and kv_range() can be checked against brute force on the CPU.
// Params hold device pointers on the GPU side; the harness builds a second copy with host pointers.
#pragma once

#include "templates/common/attention_common.cuh"

#ifndef __CUDACC_RTC__
#include <math.h>
#endif

namespace flexjit_test {

using flexjit::EMPTY;
using flexjit::FULL;
using flexjit::PARTIAL;

#define FJ_TEST_HD __host__ __device__ __forceinline__

// Full attention: no hooks at all (the fast path).
struct DenseMods {
  struct Params {
    int unused;
  };
  static constexpr bool kHasMask = false, kHasScoreMod = false, kHasSink = false;
  FJ_TEST_HD static bool mask(const Params&, int, int, int, int) { return true; }
  FJ_TEST_HD static float score(const Params&, float s, int, int, int, int) { return s; }
  FJ_TEST_HD static float sink(const Params&, int, int) { return 0.f; }
  FJ_TEST_HD static int classify(const Params&, int, int, int, int, int, int) { return FULL; }
  FJ_TEST_HD static void kv_range(const Params&, int, int, int, int, int Tkv, int* lo, int* hi) {
    *lo = 0;
    *hi = Tkv;
  }
};

// Causal, top-left aligned (FlexAttention's q_idx >= kv_idx).
struct CausalMods {
  struct Params {
    int unused;
  };
  static constexpr bool kHasMask = true, kHasScoreMod = false, kHasSink = false;
  FJ_TEST_HD static bool mask(const Params&, int, int, int q, int kv) { return kv <= q; }
  FJ_TEST_HD static float score(const Params&, float s, int, int, int, int) { return s; }
  FJ_TEST_HD static float sink(const Params&, int, int) { return 0.f; }
  FJ_TEST_HD static int classify(const Params&, int, int, int q0, int q1, int k0, int k1) {
    if (k0 > q1 - 1) return EMPTY;
    if (k1 - 1 <= q0) return FULL;
    return PARTIAL;
  }
  FJ_TEST_HD static void kv_range(const Params&, int, int, int q0, int q1, int Tkv, int* lo, int* hi) {
    *lo = 0;
    *hi = q1 < Tkv ? q1 : Tkv;
  }
};

// Causal sliding window (q - kv < window) + ALiBi bias from a captured per-head slope tensor.
struct WindowAlibiMods {
  struct Params {
    const float* slopes;  // [Hq]
    int window;
  };
  static constexpr bool kHasMask = true, kHasScoreMod = true, kHasSink = false;
  FJ_TEST_HD static bool mask(const Params& p, int, int, int q, int kv) { return kv <= q && q - kv < p.window; }
  FJ_TEST_HD static float score(const Params& p, float s, int, int h, int q, int kv) {
    return s + p.slopes[h] * static_cast<float>(kv - q);
  }
  FJ_TEST_HD static float sink(const Params&, int, int) { return 0.f; }
  FJ_TEST_HD static int classify(const Params& p, int, int, int q0, int q1, int k0, int k1) {
    if (k0 > q1 - 1 || k1 - 1 < q0 - p.window + 1) return EMPTY;
    if (k1 - 1 <= q0 && (q1 - 1) - k0 < p.window) return FULL;
    return PARTIAL;
  }
  FJ_TEST_HD static void kv_range(const Params& p, int, int, int q0, int q1, int Tkv, int* lo, int* hi) {
    const int l = q0 - p.window + 1;
    *lo = l > 0 ? l : 0;
    *hi = q1 < Tkv ? q1 : Tkv;
  }
};

// Causal + tanh soft-capping of the score (gemma-2 style).
struct SoftcapCausalMods {
  struct Params {
    float cap;
  };
  static constexpr bool kHasMask = true, kHasScoreMod = true, kHasSink = false;
  FJ_TEST_HD static bool mask(const Params&, int, int, int q, int kv) { return kv <= q; }
  FJ_TEST_HD static float score(const Params& p, float s, int, int, int, int) { return p.cap * tanhf(s / p.cap); }
  FJ_TEST_HD static float sink(const Params&, int, int) { return 0.f; }
  FJ_TEST_HD static int classify(const Params& p, int b, int h, int q0, int q1, int k0, int k1) {
    return CausalMods::classify(CausalMods::Params{}, b, h, q0, q1, k0, k1);
  }
  FJ_TEST_HD static void kv_range(const Params&, int, int, int q0, int q1, int Tkv, int* lo, int* hi) {
    *lo = 0;
    *hi = q1 < Tkv ? q1 : Tkv;
  }
};

// gpt-oss style: learned per-head sink logit (captured tensor) + causal sliding window.
struct SinkWindowMods {
  struct Params {
    const float* sinks;  // [Hq]
    int window;
  };
  static constexpr bool kHasMask = true, kHasScoreMod = false, kHasSink = true;
  FJ_TEST_HD static bool mask(const Params& p, int, int, int q, int kv) { return kv <= q && q - kv < p.window; }
  FJ_TEST_HD static float score(const Params&, float s, int, int, int, int) { return s; }
  FJ_TEST_HD static float sink(const Params& p, int, int h) { return p.sinks[h]; }
  FJ_TEST_HD static int classify(const Params& p, int, int, int q0, int q1, int k0, int k1) {
    if (k0 > q1 - 1 || k1 - 1 < q0 - p.window + 1) return EMPTY;
    if (k1 - 1 <= q0 && (q1 - 1) - k0 < p.window) return FULL;
    return PARTIAL;
  }
  FJ_TEST_HD static void kv_range(const Params& p, int, int, int q0, int q1, int Tkv, int* lo, int* hi) {
    const int l = q0 - p.window + 1;
    *lo = l > 0 ? l : 0;
    *hi = q1 < Tkv ? q1 : Tkv;
  }
};

// Dense + sink (no mask at all): exercises the sink on the FULL fast path.
struct DenseSinkMods {
  struct Params {
    const float* sinks;  // [Hq]
  };
  static constexpr bool kHasMask = false, kHasScoreMod = false, kHasSink = true;
  FJ_TEST_HD static bool mask(const Params&, int, int, int, int) { return true; }
  FJ_TEST_HD static float score(const Params&, float s, int, int, int, int) { return s; }
  FJ_TEST_HD static float sink(const Params& p, int, int h) { return p.sinks[h]; }
  FJ_TEST_HD static int classify(const Params&, int, int, int, int, int, int) { return FULL; }
  FJ_TEST_HD static void kv_range(const Params&, int, int, int, int, int Tkv, int* lo, int* hi) {
    *lo = 0;
    *hi = Tkv;
  }
};

// Rows with nothing to attend to: rows q < qmin (whole query tiles get an empty kv range) and rows
// with q % 5 == 2 (masked element by element inside PARTIAL tiles); the rest is causal.
struct HoleyMods {
  struct Params {
    int qmin;
  };
  static constexpr bool kHasMask = true, kHasScoreMod = false, kHasSink = false;
  FJ_TEST_HD static bool mask(const Params& p, int, int, int q, int kv) { return q >= p.qmin && q % 5 != 2 && kv <= q; }
  FJ_TEST_HD static float score(const Params&, float s, int, int, int, int) { return s; }
  FJ_TEST_HD static float sink(const Params&, int, int) { return 0.f; }
  FJ_TEST_HD static int classify(const Params& p, int, int, int q0, int q1, int k0, int k1) {
    if (q1 <= p.qmin || k0 > q1 - 1) return EMPTY;
    return PARTIAL;
  }
  FJ_TEST_HD static void kv_range(const Params& p, int, int, int q0, int q1, int Tkv, int* lo, int* hi) {
    *lo = 0;
    *hi = q1 <= p.qmin ? 0 : (q1 < Tkv ? q1 : Tkv);
  }
};

// "Global stripes + local band": kv % 256 < 64 always kept, plus a causal band of 32. Its kv range is
// everything, so EMPTY tiles sit in the middle of the range and must be skipped by the pipeline.
struct StripeMods {
  struct Params {
    int band;
  };
  static constexpr bool kHasMask = true, kHasScoreMod = false, kHasSink = false;
  FJ_TEST_HD static bool mask(const Params& p, int, int, int q, int kv) {
    return (kv % 256) < 64 || (kv <= q && q - kv < p.band);
  }
  FJ_TEST_HD static float score(const Params&, float s, int, int, int, int) { return s; }
  FJ_TEST_HD static float sink(const Params&, int, int) { return 0.f; }
  FJ_TEST_HD static int classify(const Params& p, int, int, int q0, int q1, int k0, int k1) {
    const bool all_stripe = (k0 % 256) + (k1 - k0) <= 64;
    const bool any_stripe = (k0 % 256) < 64 || (k1 - 1) / 256 != k0 / 256;
    const bool any_band = !(k0 > q1 - 1 || k1 - 1 < q0 - p.band + 1);
    if (all_stripe) return FULL;
    if (any_stripe || any_band) return PARTIAL;
    return EMPTY;
  }
  FJ_TEST_HD static void kv_range(const Params&, int, int, int, int, int Tkv, int* lo, int* hi) {
    *lo = 0;
    *hi = Tkv;
  }
};

#undef FJ_TEST_HD

}  // namespace flexjit_test

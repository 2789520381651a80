// flexjit: interval arithmetic over the mask IR, shared by the host analysis (ir/bounds.cpp)
// and the generated kernels (Mods::classify evaluates the same functions per tile at run time,
// with the runtime scalars' real values). Both sides must agree, so there is exactly one copy.
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
//
// Semantics (ir/interpreter.hpp is the reference): Int is int64 and wraps on overflow, so an
// interval is a set of int64 values, [lo, hi] inclusive, lo <= hi. kIvMin / kIvMax double as -inf /
// +inf ("no bound known"). Whenever an end point of a result would overflow, the true value may have
// wrapped anywhere, so the result is the full range: never a saturated end point, which would be
// wrong under wrapping. Every function is sound: the result contains op(x, y) for every x, y in
// the operands; precision is best effort.
//
// Use from a generated Mods (one IR node -> one call; Let -> a local; see ir/bounds.cpp for
// the exact mapping, e.g. `q_idx - kv_idx < window` with window a runtime scalar):
//   static int classify(const Params& p, int b, int h, int q0, int q1, int k0, int k1) {
//     const flexjit::IntInterval q = flexjit::iv_make(q0, q1 - 1), kv = flexjit::iv_make(k0, k1 - 1);
//     const flexjit::BoolInterval m = flexjit::bi_and(flexjit::iv_ge(q, kv),
//         flexjit::iv_lt(flexjit::iv_sub(q, kv), flexjit::iv_point(p.window)));
//     return flexjit::bi_tile_class(m);  // EMPTY / FULL / PARTIAL
//   }
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#ifndef FJ_HD
#define FJ_HD __host__ __device__ __forceinline__
#endif
#else
#ifndef FJ_HD
#define FJ_HD inline
#endif
#endif

namespace flexjit {

constexpr long long kIvMin = -9223372036854775807LL - 1;  // also "-inf"
constexpr long long kIvMax = 9223372036854775807LL;       // also "+inf"

struct IntInterval {
  long long lo, hi;
};

// What a Bool expression can evaluate to over the whole tile.
struct BoolInterval {
  bool can_false, can_true;
};

// ---------------------------------------------------------------------------------------------
// Constructors.
FJ_HD IntInterval iv_make(long long lo, long long hi) { return IntInterval{lo, hi}; }
FJ_HD IntInterval iv_point(long long v) { return IntInterval{v, v}; }
FJ_HD IntInterval iv_full() { return IntInterval{kIvMin, kIvMax}; }
FJ_HD bool iv_is_point(IntInterval a) { return a.lo == a.hi; }
FJ_HD bool iv_is_full(IntInterval a) { return a.lo == kIvMin && a.hi == kIvMax; }

FJ_HD BoolInterval bi_make(bool can_false, bool can_true) { return BoolInterval{can_false, can_true}; }
FJ_HD BoolInterval bi_const(bool v) { return BoolInterval{!v, v}; }
FJ_HD BoolInterval bi_unknown() { return BoolInterval{true, true}; }

// Loads of captured tensors: the element type's range (float dtypes are not analysed).
FJ_HD IntInterval iv_int8() { return IntInterval{-128, 127}; }
FJ_HD IntInterval iv_int16() { return IntInterval{-32768, 32767}; }
FJ_HD IntInterval iv_int32() { return IntInterval{-2147483647LL - 1, 2147483647LL}; }
FJ_HD IntInterval iv_uint8() { return IntInterval{0, 255}; }
FJ_HD IntInterval iv_int64() { return iv_full(); }

// ---------------------------------------------------------------------------------------------
// Scalar helpers (no builtins: NVRTC must accept them). Each returns false on overflow.
namespace ivdetail {

FJ_HD long long min2(long long a, long long b) { return a < b ? a : b; }
FJ_HD long long max2(long long a, long long b) { return a > b ? a : b; }
FJ_HD long long min4(long long a, long long b, long long c, long long d) { return min2(min2(a, b), min2(c, d)); }
FJ_HD long long max4(long long a, long long b, long long c, long long d) { return max2(max2(a, b), max2(c, d)); }

FJ_HD bool add(long long a, long long b, long long* r) {
  if ((b > 0 && a > kIvMax - b) || (b < 0 && a < kIvMin - b)) return false;
  *r = a + b;
  return true;
}
FJ_HD bool sub(long long a, long long b, long long* r) {
  if ((b < 0 && a > kIvMax + b) || (b > 0 && a < kIvMin + b)) return false;
  *r = a - b;
  return true;
}
FJ_HD bool mul(long long a, long long b, long long* r) {
  if (a == 0 || b == 0) {
    *r = 0;
    return true;
  }
  // Magnitudes as unsigned (|kIvMin| = 2^63 fits), then the sign.
  const unsigned long long ua = a < 0 ? 0ULL - static_cast<unsigned long long>(a) : static_cast<unsigned long long>(a);
  const unsigned long long ub = b < 0 ? 0ULL - static_cast<unsigned long long>(b) : static_cast<unsigned long long>(b);
  if (ua > 18446744073709551615ULL / ub) return false;
  const unsigned long long p = ua * ub;
  if ((a < 0) != (b < 0)) {
    if (p > 9223372036854775808ULL) return false;
    *r = static_cast<long long>(0ULL - p);  // modular conversion: exact for p <= 2^63
  } else {
    if (p > 9223372036854775807ULL) return false;
    *r = static_cast<long long>(p);
  }
  return true;
}

// Python floor division / modulo for b != 0 (the interval code never passes kIvMin // -1).
FJ_HD long long floordiv(long long a, long long b) {
  long long q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
FJ_HD long long floormod(long long a, long long b) {
  if (b == -1) return 0;
  long long r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// All bits up to the highest set bit of v >= 0: an upper bound of x | y and x ^ y for x, y in [0, v].
FJ_HD long long smear(long long v) {
  unsigned long long u = static_cast<unsigned long long>(v);
  u |= u >> 1;
  u |= u >> 2;
  u |= u >> 4;
  u |= u >> 8;
  u |= u >> 16;
  u |= u >> 32;
  return static_cast<long long>(u);
}

FJ_HD IntInterval hull(IntInterval a, IntInterval b) { return IntInterval{min2(a.lo, b.lo), max2(a.hi, b.hi)}; }

// floordiv over a divisor range [c, d] of one sign (0 excluded): extremes lie at the corners,
// since floor(a / b) is monotone in a and in b separately on each sign of b.
FJ_HD IntInterval floordiv_one_sign(IntInterval a, long long c, long long d) {
  if (a.lo == kIvMin && c <= -1 && -1 <= d) return iv_full();  // kIvMin // -1 wraps
  const long long v1 = floordiv(a.lo, c), v2 = floordiv(a.lo, d), v3 = floordiv(a.hi, c), v4 = floordiv(a.hi, d);
  return IntInterval{min4(v1, v2, v3, v4), max4(v1, v2, v3, v4)};
}

// floormod over a divisor range [c, d] with c >= 1: the result lies in [0, d - 1].
FJ_HD IntInterval floormod_positive(IntInterval a, long long c, long long d) {
  if (c == d && floordiv(a.lo, c) == floordiv(a.hi, c)) return IntInterval{floormod(a.lo, c), floormod(a.hi, c)};
  if (a.lo >= 0 && a.hi < c) return a;  // smaller than every divisor: unchanged
  if (a.lo >= 0) return IntInterval{0, min2(a.hi, d - 1)};
  return IntInterval{0, d - 1};
}
// floormod over a divisor range [c, d] with d <= -1: the result lies in [c + 1, 0].
FJ_HD IntInterval floormod_negative(IntInterval a, long long c, long long d) {
  if (c == d && c != -1 && floordiv(a.lo, c) == floordiv(a.hi, c))
    return IntInterval{floormod(a.lo, c), floormod(a.hi, c)};
  if (a.hi <= 0 && a.lo > d) return a;  // in (b, 0] for every divisor b: unchanged
  if (a.hi <= 0) return IntInterval{max2(a.lo, c + 1), 0};
  return IntInterval{c + 1, 0};
}

}  // namespace ivdetail

// ---------------------------------------------------------------------------------------------
// Int operations (one per IR op).
FJ_HD IntInterval iv_add(IntInterval a, IntInterval b) {
  IntInterval r;
  if (!ivdetail::add(a.lo, b.lo, &r.lo) || !ivdetail::add(a.hi, b.hi, &r.hi)) return iv_full();
  return r;
}
FJ_HD IntInterval iv_sub(IntInterval a, IntInterval b) {
  IntInterval r;
  if (!ivdetail::sub(a.lo, b.hi, &r.lo) || !ivdetail::sub(a.hi, b.lo, &r.hi)) return iv_full();
  return r;
}
FJ_HD IntInterval iv_neg(IntInterval a) {
  if (a.lo == kIvMin) return iv_full();  // -kIvMin wraps to itself
  return IntInterval{-a.hi, -a.lo};
}
FJ_HD IntInterval iv_mul(IntInterval a, IntInterval b) {
  long long v1, v2, v3, v4;
  if (!ivdetail::mul(a.lo, b.lo, &v1) || !ivdetail::mul(a.lo, b.hi, &v2) || !ivdetail::mul(a.hi, b.lo, &v3) ||
      !ivdetail::mul(a.hi, b.hi, &v4))
    return iv_full();
  return IntInterval{ivdetail::min4(v1, v2, v3, v4), ivdetail::max4(v1, v2, v3, v4)};
}
// Python a // b, with x // 0 == 0: a divisor range holding 0 adds 0 to the result.
FJ_HD IntInterval iv_floordiv(IntInterval a, IntInterval b) {
  bool have = false;
  IntInterval r = iv_point(0);
  if (b.lo <= -1) {
    r = ivdetail::floordiv_one_sign(a, b.lo, ivdetail::min2(b.hi, -1));
    have = true;
  }
  if (b.hi >= 1) {
    const IntInterval p = ivdetail::floordiv_one_sign(a, ivdetail::max2(b.lo, 1), b.hi);
    r = have ? ivdetail::hull(r, p) : p;
    have = true;
  }
  if (b.lo <= 0 && 0 <= b.hi) r = have ? ivdetail::hull(r, iv_point(0)) : iv_point(0);
  return r;
}
// Python a % b (the sign of b), with x % 0 == 0.
FJ_HD IntInterval iv_mod(IntInterval a, IntInterval b) {
  bool have = false;
  IntInterval r = iv_point(0);
  if (b.lo <= -1) {
    r = ivdetail::floormod_negative(a, b.lo, ivdetail::min2(b.hi, -1));
    have = true;
  }
  if (b.hi >= 1) {
    const IntInterval p = ivdetail::floormod_positive(a, ivdetail::max2(b.lo, 1), b.hi);
    r = have ? ivdetail::hull(r, p) : p;
    have = true;
  }
  if (b.lo <= 0 && 0 <= b.hi) r = have ? ivdetail::hull(r, iv_point(0)) : iv_point(0);
  return r;
}
FJ_HD IntInterval iv_min(IntInterval a, IntInterval b) {
  return IntInterval{ivdetail::min2(a.lo, b.lo), ivdetail::min2(a.hi, b.hi)};
}
FJ_HD IntInterval iv_max(IntInterval a, IntInterval b) {
  return IntInterval{ivdetail::max2(a.lo, b.lo), ivdetail::max2(a.hi, b.hi)};
}
FJ_HD IntInterval iv_abs(IntInterval a) {
  if (a.lo >= 0) return a;
  if (a.lo == kIvMin) return iv_full();  // abs(kIvMin) wraps
  if (a.hi <= 0) return IntInterval{-a.hi, -a.lo};
  return IntInterval{0, ivdetail::max2(-a.lo, a.hi)};
}
// Int pow (non-negative exponent): exact for a known exponent and a non-negative base.
FJ_HD IntInterval iv_pow(IntInterval a, IntInterval e) {
  if (!iv_is_point(e) || e.lo < 0 || a.lo < 0) return iv_full();
  long long lo = 1, hi = 1;
  for (long long i = 0; i < e.lo; ++i) {
    if (!ivdetail::mul(lo, a.lo, &lo) || !ivdetail::mul(hi, a.hi, &hi)) return iv_full();
    if (a.hi <= 1) break;  // a base in [0, 1] gives the same from the first power on
  }
  return IntInterval{lo, hi};
}

// Bitwise ops: precise only where the sign is known.
FJ_HD IntInterval iv_bitand(IntInterval a, IntInterval b) {
  if (a.lo >= 0 && b.lo >= 0) return IntInterval{0, ivdetail::min2(a.hi, b.hi)};
  if (a.lo >= 0) return IntInterval{0, a.hi};  // x & y only clears bits of x >= 0
  if (b.lo >= 0) return IntInterval{0, b.hi};
  if (a.hi < 0 && b.hi < 0) return IntInterval{kIvMin, ivdetail::min2(a.hi, b.hi)};
  return iv_full();
}
FJ_HD IntInterval iv_bitor(IntInterval a, IntInterval b) {
  if (a.lo >= 0 && b.lo >= 0) return IntInterval{ivdetail::max2(a.lo, b.lo), ivdetail::smear(ivdetail::max2(a.hi, b.hi))};
  if (a.hi < 0 && b.hi < 0) return IntInterval{ivdetail::max2(a.lo, b.lo), -1};
  return iv_full();
}
FJ_HD IntInterval iv_bitxor(IntInterval a, IntInterval b) {
  if (a.lo >= 0 && b.lo >= 0) return IntInterval{0, ivdetail::smear(ivdetail::max2(a.hi, b.hi))};
  return iv_full();
}
FJ_HD IntInterval iv_bitnot(IntInterval a) { return IntInterval{~a.hi, ~a.lo}; }  // ~x == -x - 1, exact
// Shifts: counts outside [0, 63] give 0 (shl) or the sign (shr).
FJ_HD IntInterval iv_shl(IntInterval a, IntInterval n) {
  if (n.lo < 0 || n.hi > 62) return iv_full();
  // x << n == x * 2^n when it does not overflow; [2^lo, 2^hi] covers every count.
  return iv_mul(a, IntInterval{1LL << n.lo, 1LL << n.hi});
}
FJ_HD IntInterval iv_shr(IntInterval a, IntInterval n) {
  if (n.lo < 0 || n.hi > 63) return IntInterval{ivdetail::min2(a.lo, 0), ivdetail::max2(a.hi, 0)};
  // Monotone in a; in n towards 0 (a >= 0) or -1 (a < 0): the corners bound it.
  const long long v1 = a.lo >> n.lo, v2 = a.lo >> n.hi, v3 = a.hi >> n.lo, v4 = a.hi >> n.hi;
  return IntInterval{ivdetail::min4(v1, v2, v3, v4), ivdetail::max4(v1, v2, v3, v4)};
}

// ---------------------------------------------------------------------------------------------
// Compares of Int intervals.
FJ_HD BoolInterval iv_lt(IntInterval a, IntInterval b) { return BoolInterval{a.hi >= b.lo, a.lo < b.hi}; }
FJ_HD BoolInterval iv_le(IntInterval a, IntInterval b) { return BoolInterval{a.hi > b.lo, a.lo <= b.hi}; }
FJ_HD BoolInterval iv_gt(IntInterval a, IntInterval b) { return iv_lt(b, a); }
FJ_HD BoolInterval iv_ge(IntInterval a, IntInterval b) { return iv_le(b, a); }
FJ_HD BoolInterval iv_eq(IntInterval a, IntInterval b) {
  const bool overlap = a.lo <= b.hi && b.lo <= a.hi;
  const bool same_point = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
  return BoolInterval{!same_point, overlap};
}
FJ_HD BoolInterval iv_ne(IntInterval a, IntInterval b) {
  const BoolInterval e = iv_eq(a, b);
  return BoolInterval{e.can_true, e.can_false};
}

// ---------------------------------------------------------------------------------------------
// Bool operations (And / Or and the Bool forms of & | ^, == and != on Bool operands).
FJ_HD BoolInterval bi_not(BoolInterval a) { return BoolInterval{a.can_true, a.can_false}; }
FJ_HD BoolInterval bi_and(BoolInterval a, BoolInterval b) {
  return BoolInterval{a.can_false || b.can_false, a.can_true && b.can_true};
}
FJ_HD BoolInterval bi_or(BoolInterval a, BoolInterval b) {
  return BoolInterval{a.can_false && b.can_false, a.can_true || b.can_true};
}
FJ_HD BoolInterval bi_xor(BoolInterval a, BoolInterval b) {
  return BoolInterval{(a.can_false && b.can_false) || (a.can_true && b.can_true),
                      (a.can_false && b.can_true) || (a.can_true && b.can_false)};
}
FJ_HD BoolInterval bi_eq(BoolInterval a, BoolInterval b) { return bi_not(bi_xor(a, b)); }
FJ_HD BoolInterval bi_ne(BoolInterval a, BoolInterval b) { return bi_xor(a, b); }

// ---------------------------------------------------------------------------------------------
// Select: the taken branch when the condition is decided, else the union.
FJ_HD IntInterval iv_select(BoolInterval c, IntInterval t, IntInterval f) {
  if (!c.can_false) return t;
  if (!c.can_true) return f;
  return ivdetail::hull(t, f);
}
FJ_HD BoolInterval bi_select(BoolInterval c, BoolInterval t, BoolInterval f) {
  if (!c.can_false) return t;
  if (!c.can_true) return f;
  return BoolInterval{t.can_false || f.can_false, t.can_true || f.can_true};
}

// Casts: bool -> int is 0 / 1; int -> bool is x != 0. (float -> int: iv_full(); any float compare
// or float -> bool: bi_unknown().)
FJ_HD IntInterval iv_from_bool(BoolInterval a) {
  return IntInterval{a.can_false ? 0 : 1, a.can_true ? 1 : 0};
}
FJ_HD BoolInterval bi_from_int(IntInterval a) { return iv_ne(a, iv_point(0)); }

// The tile class of a mask's BoolInterval over a tile (attention_common.cuh's numbering):
// 0 = EMPTY (never true), 1 = FULL (never false), 2 = PARTIAL.
FJ_HD int bi_tile_class(BoolInterval m) {
  if (!m.can_true) return 0;
  if (!m.can_false) return 1;
  return 2;
}

}  // namespace flexjit

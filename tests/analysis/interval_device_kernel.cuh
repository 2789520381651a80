// A kernel that applies every interval primitive to a batch of operand pairs, written once for
// both device checks: NVRTC compiles it from the embedded text (interval_nvrtc_test.cpp), and
// interval_device_selftest.cu runs it on a GPU against the host results. Includes only
// interval.cuh, as a generated Mods would.
#pragma once

#include "interval.cuh"

namespace flexjit_iv_test {

// Results per operand pair: 13 Int ops + 4 unary, then 6 compares and 5 Bool ops (as 0..3 codes).
constexpr int kIntResults = 17;
constexpr int kBoolResults = 11;

FJ_HD int code(flexjit::BoolInterval b) { return (b.can_false ? 1 : 0) | (b.can_true ? 2 : 0); }
FJ_HD flexjit::BoolInterval uncode(int c) { return flexjit::bi_make((c & 1) != 0, (c & 2) != 0); }

FJ_HD void apply_all(const flexjit::IntInterval& a, const flexjit::IntInterval& b, int ca, int cb,
                     flexjit::IntInterval* ints, int* bools) {
  using namespace flexjit;
  ints[0] = iv_add(a, b);
  ints[1] = iv_sub(a, b);
  ints[2] = iv_mul(a, b);
  ints[3] = iv_floordiv(a, b);
  ints[4] = iv_mod(a, b);
  ints[5] = iv_min(a, b);
  ints[6] = iv_max(a, b);
  ints[7] = iv_bitand(a, b);
  ints[8] = iv_bitor(a, b);
  ints[9] = iv_bitxor(a, b);
  ints[10] = iv_shl(a, b);
  ints[11] = iv_shr(a, b);
  ints[12] = iv_pow(a, b);
  ints[13] = iv_neg(a);
  ints[14] = iv_abs(a);
  ints[15] = iv_bitnot(a);
  ints[16] = iv_select(uncode(ca), a, b);
  bools[0] = code(iv_lt(a, b));
  bools[1] = code(iv_le(a, b));
  bools[2] = code(iv_gt(a, b));
  bools[3] = code(iv_ge(a, b));
  bools[4] = code(iv_eq(a, b));
  bools[5] = code(iv_ne(a, b));
  bools[6] = code(bi_and(uncode(ca), uncode(cb)));
  bools[7] = code(bi_or(uncode(ca), uncode(cb)));
  bools[8] = code(bi_xor(uncode(ca), uncode(cb)));
  bools[9] = code(bi_select(uncode(ca), bi_from_int(a), bi_not(uncode(cb))));
  bools[10] = bi_tile_class(uncode(ca)) + 4 * code(bi_from_int(iv_from_bool(uncode(cb))));
}

}  // namespace flexjit_iv_test

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
extern "C" __global__ void interval_all_ops(const flexjit::IntInterval* a, const flexjit::IntInterval* b,
                                            const int* ca, const int* cb, int n, flexjit::IntInterval* ints,
                                            int* bools) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  flexjit_iv_test::apply_all(a[i], b[i], ca[i], cb[i], ints + i * flexjit_iv_test::kIntResults,
                             bools + i * flexjit_iv_test::kBoolResults);
}
#endif

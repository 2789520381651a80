// A decode call's out and lse against the oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/support/decode_case.hpp"

namespace flexjit::test {

DecodeFigures expect_decode_matches(const DecodeCase& c, const ReferenceOutputs& ref, const DecodeOutputs& got,
                                    const DecodeTolerance& tolerance, const std::string& what,
                                    const std::vector<int>& nan_sequences) {
  const std::vector<float>& out = got.out;
  const std::vector<float>& lse = got.lse;
  const std::size_t D = static_cast<std::size_t>(c.Dv), rows_per_sequence = static_cast<std::size_t>(c.Hq) * c.Tq;
  EXPECT_EQ(out.size(), c.rows() * D) << what;
  EXPECT_EQ(lse.size(), c.rows()) << what;
  if (out.size() != c.rows() * D || lse.size() != c.rows()) return {};

  DecodeFigures f;
  std::int64_t not_nan = 0, keyless_not_zero = 0, keyless_not_minus_inf = 0;
  double out_diff2 = 0, out_ref2 = 0, lse_diff2 = 0, lse_ref2 = 0;
  for (std::size_t r = 0; r < c.rows(); ++r) {
    const int b = static_cast<int>(r / rows_per_sequence);
    const float* row = out.data() + r * D;
    if (std::find(nan_sequences.begin(), nan_sequences.end(), b) != nan_sequences.end()) {
      not_nan += std::count_if(row, row + D, [](float x) { return !std::isnan(x); }) + !std::isnan(lse[r]);
      continue;
    }
    const bool keyless = ref.visible[r] == 0;
    f.keyless_rows += keyless;
    for (std::size_t d = 0; d < D; ++d) {
      const double want = ref.out[r * D + d], e = row[d] - want;
      keyless_not_zero += keyless && row[d] != 0.f;
      out_diff2 += e * e;
      out_ref2 += want * want;
    }
    if (std::isinf(ref.lse[r])) {  // no key and no sink: exactly -inf
      keyless_not_minus_inf += lse[r] != -std::numeric_limits<float>::infinity();
      continue;
    }
    ++f.finite_rows;
    const double e = lse[r] - ref.lse[r];
    lse_diff2 += e * e;
    lse_ref2 += ref.lse[r] * ref.lse[r];
    f.lse_max_abs = std::max(f.lse_max_abs, std::isnan(e) ? std::numeric_limits<double>::infinity() : std::abs(e));
  }
  const auto relative = [](double diff2, double ref2) { return ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2); };
  f.out_rel_l2 = relative(out_diff2, out_ref2);
  f.lse_rel_l2 = relative(lse_diff2, lse_ref2);

  EXPECT_EQ(not_nan, 0) << what << ": elements of out and lse not NaN in the sequences with a bad length or page";
  EXPECT_EQ(keyless_not_zero, 0) << what << ": non-zero out in rows that see no key";
  EXPECT_EQ(keyless_not_minus_inf, 0) << what << ": lse not -inf in rows that see no key and have no sink";
  EXPECT_GT(f.finite_rows, 0) << what << ": no row sees a key (the case checks nothing)";
  EXPECT_LT(f.out_rel_l2, tolerance.out_rel_l2) << what << ": relative L2 error of out";
  EXPECT_LT(f.lse_rel_l2, tolerance.lse_rel_l2) << what << ": relative L2 error of lse";
  EXPECT_LT(f.lse_max_abs, tolerance.lse_max_abs) << what << ": largest lse error of a row";
  return f;
}

}  // namespace flexjit::test

#pragma once
// Central finite differences of the loss sum(out * dout), out from the float64 forward oracle,
// with respect to every element of one of a case's float32 arrays (q, k, v or a captured tensor).
//
// The inputs are fp32, so an element t is perturbed to the fp32 values t +- h and the difference
// is divided by the width they actually span (exact in double). Everything downstream is double
// except where the program has a score_mod or a sink: the forward rounds score_mod's input to
// fp32 and score_mod computes in fp32 (as the kernels do), which puts a rounding noise of about
// ulp(s) ~ 2.4e-7 (|s| < 4) on every score. That noise, divided by the step, bounds how small the
// step may be; the truncation error (h^2 / 6 times a third derivative of O(1) on these inputs)
// bounds how large:
//   double only (no score_mod):  h = 2^-10 max(1, |t|) (~1e-3 relative): truncation ~2e-7,
//                                rounding ~1e-13; differences good to ~1e-6 of the largest gradient
//   fp32 score_mod (or sink):    h = 2^-7 max(1, |t|): noise at most ~ Tkv * 2.4e-7 / 7.8e-3
//                                ~ 2e-4 (in practice the roundings mostly cancel: ~3e-5),
//                                truncation ~1e-5, of the largest gradient
// loss_gradient_tolerance() gives the matching bound on max |analytic - fd| / max |fd|.
#include <string>
#include <vector>

#include "tests/backward/attention_case.hpp"

namespace backward_test {

struct Step {
  double relative;   // h = relative * max(1, |t|)
  double tolerance;  // on max |analytic - fd| / max |fd| over one array
};
Step step_for(const AttentionCase& c);

// d loss / d x[e] for every element of x, an array of c that its inputs point into.
std::vector<double> loss_gradient(AttentionCase& c, std::vector<float>& x, double relative_step);

// max |a - fd| / max |fd| (max |a - fd| when fd is all zero); infinity on a NaN or a size mismatch.
double normalized_error(const std::vector<double>& a, const std::vector<double>& fd);

// Checks (gtest) an oracle's gradient of one array against finite differences, prints the error,
// and checks that the same gradient 2% off fails (when it is not zero).
void expect_gradient_matches(AttentionCase& c, const std::string& what, const std::vector<double>& analytic,
                             std::vector<float>& x);

}  // namespace backward_test

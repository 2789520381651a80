#include "tests/backward/loss_finite_difference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace backward_test {

Step step_for(const AttentionCase& c) {
  // Measured (printed by the tests): at most ~1.1e-7 (double only) and ~3e-5 (fp32 score_mod,
  // sink) of the largest gradient. The tolerances leave about 10x above that and stay far below
  // the 2% a wrong gradient is shown to miss by.
  if (c.program.score_mod || c.program.sink) return {std::ldexp(1.0, -7), 5e-4};
  return {std::ldexp(1.0, -10), 1e-6};
}

std::vector<double> loss_gradient(AttentionCase& c, std::vector<float>& x, double relative_step) {
  std::vector<double> out(x.size());
  for (std::size_t e = 0; e < x.size(); ++e) {
    const float t = x[e];
    const double h = relative_step * std::max(1.0, static_cast<double>(std::fabs(t)));
    const float up = static_cast<float>(t + h), down = static_cast<float>(t - h);
    x[e] = up;
    const double loss_up = c.loss();
    x[e] = down;
    const double loss_down = c.loss();
    x[e] = t;
    out[e] = (loss_up - loss_down) / (static_cast<double>(up) - static_cast<double>(down));
  }
  return out;
}

double normalized_error(const std::vector<double>& a, const std::vector<double>& fd) {
  if (a.size() != fd.size()) return std::numeric_limits<double>::infinity();
  double worst = 0, largest = 0;
  for (std::size_t e = 0; e < a.size(); ++e) {
    if (std::isnan(a[e]) || std::isnan(fd[e])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(a[e] - fd[e]));
    largest = std::max(largest, std::fabs(fd[e]));
  }
  return largest == 0 ? worst : worst / largest;
}

void expect_gradient_matches(AttentionCase& c, const std::string& what, const std::vector<double>& analytic,
                             std::vector<float>& x) {
  const Step step = step_for(c);
  const std::vector<double> fd = loss_gradient(c, x, step.relative);
  const double error = normalized_error(analytic, fd);
  EXPECT_LE(error, step.tolerance) << c.name << ": " << what;
  double largest = 0;
  for (double g : fd) largest = std::max(largest, std::fabs(g));
  std::vector<double> wrong = analytic;
  for (double& g : wrong) g *= 1.02;
  const double wrong_error = normalized_error(wrong, fd);
  if (largest > 0) {
    EXPECT_GT(wrong_error, step.tolerance) << c.name << ": " << what << " 2% off passes";
  }
  std::printf("%-34s %-12s max |grad| %.3e  error %.2e (tolerance %.0e; 2%% off: %.2e)\n", c.name.c_str(), what.c_str(),
              largest, error, step.tolerance, wrong_error);
}

}  // namespace backward_test

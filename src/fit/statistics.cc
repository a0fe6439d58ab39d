#include "fit/statistics.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fitspeed {

namespace {

constexpr double kNaNStatistics = std::numeric_limits<double>::quiet_NaN();

// GSL calls abort() on a domain error unless its handler is turned off; do it
// once before the first GSL call. GSL then returns NaN, which is checked.
void TurnGslAbortOff() {
  static const bool turned_off = [] {
    gsl_set_error_handler_off();
    return true;
  }();
  (void)turned_off;
}

// ln n! for n = 0..max, by summing logarithms.
std::vector<double> LogFactorials(int max) {
  std::vector<double> table(max + 1, 0.0);
  for (int k = 2; k <= max; ++k) table[k] = table[k - 1] + std::log(static_cast<double>(k));
  return table;
}

}  // namespace

double StudentTQuantile(double p, double dof) {
  if (!(dof >= 1) || !(p > 0 && p < 1)) return kNaNStatistics;
  // gsl_cdf_tdist_Pinv iterates; fits of one data set ask for the same quantile.
  thread_local double last_p = kNaNStatistics, last_dof = kNaNStatistics, last_q = kNaNStatistics;
  if (p == last_p && dof == last_dof) return last_q;
  TurnGslAbortOff();
  const double q = gsl_cdf_tdist_Pinv(p, dof);
  last_p = p;
  last_dof = dof;
  last_q = std::isfinite(q) ? q : kNaNStatistics;
  return last_q;
}

double FUpperTail(double f, double d1, double d2) {
  if (!(d1 > 0 && d2 > 0) || !(f >= 0) || !std::isfinite(f)) return kNaNStatistics;
  TurnGslAbortOff();
  const double p = gsl_cdf_fdist_Q(f, d1, d2);
  return std::isfinite(p) ? p : kNaNStatistics;
}

RunsTest WaldWolfowitzRuns(const std::vector<bool>& positive) {
  RunsTest test;
  for (size_t i = 0; i < positive.size(); ++i) {
    (positive[i] ? test.positive : test.negative) += 1;
    if (i == 0 || positive[i] != positive[i - 1]) ++test.runs;
  }
  const int n1 = test.positive, n2 = test.negative;
  if (n1 == 0 || n2 == 0) return test;
  // P(R = 2k)   = 2 C(n1-1, k-1) C(n2-1, k-1) / C(n1+n2, n1)
  // P(R = 2k+1) = [C(n1-1, k-1) C(n2-1, k) + C(n1-1, k) C(n2-1, k-1)] / C(n1+n2, n1)
  const std::vector<double> log_factorial = LogFactorials(n1 + n2);
  // ln C(n, k) for 0 <= k <= n; -inf (C = 0) otherwise.
  auto log_choose = [&log_factorial](int n, int k) {
    if (k < 0 || k > n) return -std::numeric_limits<double>::infinity();
    return log_factorial[n] - log_factorial[k] - log_factorial[n - k];
  };
  const double log_total = log_choose(n1 + n2, n1);
  double p = 0;
  for (int r = 2; r <= test.runs; ++r) {
    const int k = r / 2;
    if (r % 2 == 0) {
      p += 2 * std::exp(log_choose(n1 - 1, k - 1) + log_choose(n2 - 1, k - 1) - log_total);
    } else {
      p += std::exp(log_choose(n1 - 1, k - 1) + log_choose(n2 - 1, k) - log_total) +
           std::exp(log_choose(n1 - 1, k) + log_choose(n2 - 1, k - 1) - log_total);
    }
  }
  test.p_few_runs = std::min(1.0, p);
  return test;
}

double ConstantModelRss(Objective objective, const std::vector<double>& observed) {
  if (observed.empty()) return kNaNStatistics;
  double rss = 0;
  if (objective == Objective::kRelativeTime) {
    // Residual c/y - 1 is linear in c: c = sum(1/y) / sum(1/y^2).
    double s1 = 0, s2 = 0;
    for (double y : observed) {
      s1 += 1 / y;
      s2 += 1 / (y * y);
    }
    const double c = s1 / s2;
    for (double y : observed) rss += (c / y - 1) * (c / y - 1);
    return rss;
  }
  double mean = 0;
  for (double y : observed) mean += y;
  mean /= static_cast<double>(observed.size());
  for (double y : observed) rss += (y - mean) * (y - mean);
  return rss;
}

}  // namespace fitspeed

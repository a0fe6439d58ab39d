// Distributions and tests the fit reports use (GSL behind a small interface).
#ifndef FITSPEED_SRC_FIT_STATISTICS_H_
#define FITSPEED_SRC_FIT_STATISTICS_H_

#include <vector>

#include "fitspeed/fit/fit.h"

namespace fitspeed {

// The p-quantile of Student's t with `dof` degrees of freedom
// (gsl_cdf_tdist_Pinv); NaN when dof < 1 or GSL reports an error.
double StudentTQuantile(double p, double dof);

// P(F > f) for Fisher's F with (d1, d2) degrees of freedom; NaN on error.
double FUpperTail(double f, double d1, double d2);

// Wald-Wolfowitz runs test of a sequence of signs (true = positive).
struct RunsTest {
  int runs = 0;
  int positive = 0;
  int negative = 0;
  // Exact P(runs <= observed) under random order (few runs = a trend); 1 when
  // one of the signs is absent.
  double p_few_runs = 1;
};
// Exact distribution: Wald & Wolfowitz (1940), Ann. Math. Statist. 11(2):147-162.
RunsTest WaldWolfowitzRuns(const std::vector<bool>& positive);

// The sum of squared residuals of the best constant prediction c of the
// observed values under `objective` (the TSS of R^2): sum (y - mean)^2 for the
// absolute objectives, min_c sum (c/y - 1)^2 for relative-time.
double ConstantModelRss(Objective objective, const std::vector<double>& observed);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_FIT_STATISTICS_H_

// The alpha-beta model of a communication operation fitted to measured times,
// and the links (fitspeed/core/comm.h) it calibrates:
//   t(S) = alpha + beta*S
// with alpha the per-operation latency and beta the inverse bandwidth
// (Hockney, Parallel Computing 20(3), 1994; Thakur, Rabenseifner & Gropp,
// IJHPCA 19(1), 2005). `fitspeed linkbench` times MPI all-reduce and
// point-to-point messages over many sizes and fits them here.
//
//   fitspeed::AlphaBetaFit fit = fitspeed::FitAlphaBeta(timings);
//   fitspeed::MeasuredLink ring = fitspeed::RingLinkFromAllReduce(fit, 4);
//   double t = fitspeed::RingAllReduceTime(bytes, 4, ring.link);  // == fit.Predict(bytes)
#ifndef FITSPEED_PROJECT_LINKS_H_
#define FITSPEED_PROJECT_LINKS_H_

#include <string>
#include <vector>

#include "fitspeed/project/scaling.h"

namespace fitspeed {

// The median time of one operation (an all-reduce of `bytes`, or one one-way
// message: half a ping-pong round trip) that moves `bytes`.
struct LinkTiming {
  double bytes = 0;    // message size, >= 0 and finite
  double seconds = 0;  // > 0 and finite
};

// t = alpha + beta*S fitted to link timings.
struct AlphaBetaFit {
  double alpha_s = 0;          // per-operation latency, s
  double beta_s_per_byte = 0;  // inverse bandwidth, s/B
  // Standard errors: sqrt of the diagonal of s^2 (J^T J)^-1, s^2 = RSS/(points - 2),
  // both parameters free at the solution even where a bound holds one at 0;
  // NaN when they cannot be estimated (the covariance is rank deficient).
  double alpha_std_error = 0, beta_std_error = 0;
  // Intervals value -+ t_{(1+confidence)/2, points-2} * std_error (Student's
  // t), lower ends clipped at 0 (alpha and beta are fitted with alpha, beta >= 0).
  double alpha_ci_low = 0, alpha_ci_high = 0, beta_ci_low = 0, beta_ci_high = 0;
  double confidence = 0.95;
  int points = 0;
  bool converged = false;            // Ceres reported convergence
  double rms_relative_residual = 0;  // sqrt(mean((pred/meas - 1)^2))
  double max_relative_residual = 0;  // max |pred/meas - 1|

  double Predict(double bytes) const;  // alpha + beta*bytes, s
  // One line: alpha, beta and 1/beta with their intervals, points, residuals.
  std::string BriefReport() const;
};

// Fits t = alpha + beta*S by least squares on relative residuals pred/meas - 1
// (so that 4 B and 256 MB weigh alike) with Ceres, alpha >= 0, beta >= 0;
// standard errors from ceres::Covariance scaled by the residual variance (dof =
// points - 2), Student's t intervals at `confidence`. Throws DataError naming
// the point for fewer than 3 points, seconds not > 0 and finite, bytes not >= 0
// and finite, or all sizes equal; UsageError for a confidence outside (0, 1).
AlphaBetaFit FitAlphaBeta(const std::vector<LinkTiming>& timings, double confidence = 0.95);

// A link calibrated from a fit, with the intervals of its two numbers.
struct MeasuredLink {
  Link link;
  // Bytes/s, from beta's interval (bandwidth_high is +inf when beta's low end is 0).
  double bandwidth_low = 0, bandwidth_high = 0;
  double latency_low = 0, latency_high = 0;  // s, from alpha's interval
};

// The link under which the ring formula (RingAllReduceTime: 2(n-1)/n*S/B +
// 2(n-1)*a) reproduces an all-reduce fit over `ranks` ranks: a = alpha/(2(n-1)),
// B = 2(n-1)/n / beta (+inf when beta = 0); the intervals carried through the
// same monotone maps. Throws UsageError unless ranks >= 2.
MeasuredLink RingLinkFromAllReduce(const AlphaBetaFit& fit, int ranks);

// The link of point-to-point messages: one-way time t = a + S/B, so a = alpha
// and B = 1/beta (+inf when beta = 0).
MeasuredLink LinkFromPointToPoint(const AlphaBetaFit& fit);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_LINKS_H_

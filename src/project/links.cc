// The alpha-beta fit of link timings and the links it calibrates (links.h).
#include "fitspeed/project/links.h"

#include <ceres/ceres.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/table.h"
#include "fit/solver_options.h"
#include "fit/statistics.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// pred/meas - 1 of one timing in scaled parameters x = alpha/alpha_scale,
// y = beta/beta_scale: u*x + v*y - 1 with u = alpha_scale/t, v = beta_scale*S/t.
// The scales make both Jacobian columns O(1), so that the covariance of 4 B
// and 256 MB messages together stays well conditioned.
struct RelativeResidual {
  double u = 0;
  double v = 0;
  template <typename T>
  bool operator()(const T* x, const T* y, T* residual) const {
    residual[0] = u * x[0] + v * y[0] - 1.0;
    return true;
  }
};

// The least-squares solution with x, y >= 0 from the normal equations (the
// residuals are linear): the unconstrained one if it is feasible, else the
// better of the two edges x = 0 and y = 0 (the optimum of a convex problem whose
// unconstrained optimum is outside the quadrant lies on its boundary).
struct BoundedStart {
  double x = 0, y = 0;
  bool x_at_bound = false, y_at_bound = false;
};
BoundedStart SolveNormalEquations(const std::vector<RelativeResidual>& residuals) {
  double uu = 0, uv = 0, vv = 0, u1 = 0, v1 = 0;
  for (const RelativeResidual& r : residuals) {
    uu += r.u * r.u;
    uv += r.u * r.v;
    vv += r.v * r.v;
    u1 += r.u;
    v1 += r.v;
  }
  const double det = uu * vv - uv * uv;
  BoundedStart start;
  start.x = (u1 * vv - v1 * uv) / det;
  start.y = (uu * v1 - uv * u1) / det;
  if (det > 0 && start.x >= 0 && start.y >= 0) return start;
  // Cost of (x, y) up to a constant: x^2 uu + 2xy uv + y^2 vv - 2x u1 - 2y v1.
  const double x_only = u1 / uu, y_only = v1 / vv;
  if (-u1 * x_only < -v1 * y_only) return {x_only, 0, false, true};
  return {0, y_only, true, false};
}

void CheckTimings(const std::vector<LinkTiming>& timings) {
  for (size_t i = 0; i < timings.size(); ++i) {
    const LinkTiming& p = timings[i];
    if (!(std::isfinite(p.bytes) && p.bytes >= 0)) {
      throw DataError(fmt::format("link timing {} ({} bytes, {} s): bytes must be >= 0 and finite",
                                  i, p.bytes, p.seconds));
    }
    if (!(std::isfinite(p.seconds) && p.seconds > 0)) {
      throw DataError(fmt::format("link timing {} ({} bytes, {} s): seconds must be > 0 and finite",
                                  i, p.bytes, p.seconds));
    }
  }
  if (timings.size() < 3) {
    throw DataError(
        fmt::format("fitting t = alpha + beta*bytes with intervals needs >= 3 link timings, got {}",
                    timings.size()));
  }
  const bool one_size = std::all_of(timings.begin(), timings.end(), [&](const LinkTiming& p) {
    return p.bytes == timings.front().bytes;
  });
  if (one_size) {
    throw DataError(fmt::format(
        "all {} link timings move {} bytes: alpha and beta need at least two message sizes",
        timings.size(), timings.front().bytes));
  }
}

// The link (a, B) with a = alpha/latency_divisor and B = bandwidth_factor/beta,
// intervals through the same (monotone) maps.
MeasuredLink LinkFromFit(const AlphaBetaFit& fit, double latency_divisor, double bandwidth_factor) {
  auto bandwidth = [bandwidth_factor](double beta) {
    return beta == 0 ? kInfinity : bandwidth_factor / beta;
  };
  MeasuredLink m;
  m.link.latency_s = fit.alpha_s / latency_divisor;
  m.link.bandwidth_bytes_per_s = bandwidth(fit.beta_s_per_byte);
  m.latency_low = fit.alpha_ci_low / latency_divisor;
  m.latency_high = fit.alpha_ci_high / latency_divisor;
  m.bandwidth_low = bandwidth(fit.beta_ci_high);
  m.bandwidth_high = bandwidth(fit.beta_ci_low);
  return m;
}

}  // namespace

double AlphaBetaFit::Predict(double bytes) const { return alpha_s + beta_s_per_byte * bytes; }

std::string AlphaBetaFit::BriefReport() const {
  const double bandwidth = beta_s_per_byte > 0 ? 1 / beta_s_per_byte : kInfinity;
  return fmt::format(
      "alpha = {} s [{}, {}], beta = {} s/B [{}, {}] (1/beta = {} B/s), {:.0f}% intervals, {} "
      "points, relative residual rms {}, max {}{}",
      FormatSig(alpha_s), FormatSig(alpha_ci_low), FormatSig(alpha_ci_high),
      FormatSig(beta_s_per_byte), FormatSig(beta_ci_low), FormatSig(beta_ci_high),
      FormatSig(bandwidth), 100 * confidence, points, FormatSig(rms_relative_residual, 3),
      FormatSig(max_relative_residual, 3), converged ? "" : " (not converged)");
}

AlphaBetaFit FitAlphaBeta(const std::vector<LinkTiming>& timings, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw UsageError(fmt::format("confidence {} is outside (0, 1)", confidence));
  }
  CheckTimings(timings);
  double t_min = kInfinity, t_max = 0, s_max = 0;
  for (const LinkTiming& p : timings) {
    t_min = std::min(t_min, p.seconds);
    t_max = std::max(t_max, p.seconds);
    s_max = std::max(s_max, p.bytes);
  }
  // alpha is at most about the shortest time, beta about the longest over the largest size.
  const double alpha_scale = t_min;
  const double beta_scale = t_max / s_max;

  std::vector<RelativeResidual> residuals;
  for (const LinkTiming& p : timings) {
    residuals.push_back({alpha_scale / p.seconds, beta_scale * p.bytes / p.seconds});
  }
  // Ceres from the bounded normal-equations solution, a bound that is active
  // held there (its projected steps crawl along a bound).
  const BoundedStart start = SolveNormalEquations(residuals);
  double x = start.x, y = start.y;
  ceres::Problem problem;
  for (const RelativeResidual& r : residuals) {
    problem.AddResidualBlock(
        new ceres::AutoDiffCostFunction<RelativeResidual, 1, 1, 1>(new RelativeResidual(r)),
        nullptr, &x, &y);
  }
  problem.SetParameterLowerBound(&x, 0, 0.0);
  problem.SetParameterLowerBound(&y, 0, 0.0);
  if (start.x_at_bound) problem.SetParameterBlockConstant(&x);
  if (start.y_at_bound) problem.SetParameterBlockConstant(&y);
  ceres::Solver::Summary summary;
  ceres::Solve(QuietSolverOptions({200, 1e-15, 1e-14, 1e-16}), &problem, &summary);

  AlphaBetaFit fit;
  fit.confidence = confidence;
  fit.points = static_cast<int>(timings.size());
  fit.converged = summary.IsSolutionUsable() && summary.termination_type == ceres::CONVERGENCE;
  fit.alpha_s = alpha_scale * x;
  fit.beta_s_per_byte = beta_scale * y;

  double rss = 0;
  for (const LinkTiming& p : timings) {
    const double r = fit.Predict(p.bytes) / p.seconds - 1;
    rss += r * r;
    fit.max_relative_residual = std::max(fit.max_relative_residual, std::fabs(r));
  }
  fit.rms_relative_residual = std::sqrt(rss / fit.points);

  // Covariance s^2 (J^T J)^-1 of the scaled parameters, s^2 = RSS/dof, of the
  // model at the solution (both parameters free, as without the bounds).
  const int dof = fit.points - 2;
  problem.SetParameterBlockVariable(&x);
  problem.SetParameterBlockVariable(&y);
  double var_x = kNaN, var_y = kNaN;
  ceres::Covariance::Options covariance_options;
  covariance_options.algorithm_type = ceres::DENSE_SVD;
  ceres::Covariance estimator(covariance_options);
  const std::vector<std::pair<const double*, const double*>> blocks = {{&x, &x}, {&y, &y}};
  if (!(estimator.Compute(blocks, &problem) && estimator.GetCovarianceBlock(&x, &x, &var_x) &&
        estimator.GetCovarianceBlock(&y, &y, &var_y))) {
    var_x = var_y = kNaN;
  }
  const double variance = rss / dof;
  fit.alpha_std_error = alpha_scale * std::sqrt(variance * var_x);
  fit.beta_std_error = beta_scale * std::sqrt(variance * var_y);
  const double t = StudentTQuantile(0.5 * (1 + confidence), dof);
  fit.alpha_ci_low = std::max(0.0, fit.alpha_s - t * fit.alpha_std_error);
  fit.alpha_ci_high = fit.alpha_s + t * fit.alpha_std_error;
  fit.beta_ci_low = std::max(0.0, fit.beta_s_per_byte - t * fit.beta_std_error);
  fit.beta_ci_high = fit.beta_s_per_byte + t * fit.beta_std_error;
  if (std::isnan(fit.alpha_std_error)) fit.alpha_ci_low = fit.alpha_ci_high = kNaN;
  if (std::isnan(fit.beta_std_error)) fit.beta_ci_low = fit.beta_ci_high = kNaN;
  return fit;
}

MeasuredLink RingLinkFromAllReduce(const AlphaBetaFit& fit, int ranks) {
  if (ranks < 2) {
    throw UsageError(
        fmt::format("a ring link from an all-reduce fit needs ranks >= 2, got {}", ranks));
  }
  const double steps = 2.0 * (ranks - 1);
  return LinkFromFit(fit, steps, steps / ranks);
}

MeasuredLink LinkFromPointToPoint(const AlphaBetaFit& fit) { return LinkFromFit(fit, 1, 1); }

}  // namespace fitspeed

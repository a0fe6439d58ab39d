// Start heuristics of the laws (the laws themselves are templates in laws.h).
#include "fit/laws.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "core/finite.h"
#include "core/median.h"

namespace fitspeed {

namespace {}  // namespace

std::array<double, 2> HyperbolicLaw::Start(const std::vector<StepObservation>& data,
                                           Objective objective) {
  // Step time T = b*a + t with a = 1/v0. Each row is scaled by the weight w that
  // turns T_pred - T_obs into the objective's residual (exactly for the time
  // objectives, to first order for throughput):
  //   relative-time       w = 1/T_obs        (T_pred/T_obs - 1)
  //   absolute-time       w = 1
  //   absolute-throughput w = b/T_obs^2      (b/T_pred - b/T_obs ~ -b/T^2 (T_pred - T_obs))
  const Eigen::Index n = static_cast<Eigen::Index>(data.size());
  Eigen::MatrixXd rows(n, 2);
  Eigen::VectorXd target(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double b = data[i].batch, step = data[i].step_time_s;
    double w = 1;
    if (objective == Objective::kRelativeTime) w = 1 / step;
    if (objective == Objective::kAbsoluteThroughput) w = b / (step * step);
    rows(i, 0) = w * b;
    rows(i, 1) = w;
    target(i) = w * step;
  }
  const Eigen::Vector2d solution = rows.householderQr().solve(target);
  double a = solution(0), t = solution(1);
  if (PositiveFinite(a) && !(t >= 0)) {
    // A negative fixed cost: keep t on its bound and fit the slope alone.
    t = 0;
    a = rows.col(0).dot(target) / rows.col(0).squaredNorm();
  }
  if (PositiveFinite(a) && std::isfinite(t) && t >= 0) return {1 / a, t};
  // Throughput falls with batch (or the data are degenerate): start at the
  // largest throughput seen, with the median of what the step times leave for t
  // (each T - b/v0 >= 0 because no point is faster than v0).
  double v0 = 0;
  for (const StepObservation& o : data) v0 = std::max(v0, o.throughput_sps());
  std::vector<double> fixed;
  for (const StepObservation& o : data) fixed.push_back(o.step_time_s - o.batch / v0);
  return {v0, std::max(0.0, Median(fixed))};
}

std::array<double, 2> ExponentialLaw::Start(const std::vector<StepObservation>& data,
                                            Objective objective) {
  const std::array<double, 2> hyperbolic = HyperbolicLaw::Start(data, objective);
  double b_scale = hyperbolic[0] * hyperbolic[1];
  if (!PositiveFinite(b_scale)) {
    std::vector<double> batches;
    for (const StepObservation& o : data) batches.push_back(o.batch);
    b_scale = Median(batches);
  }
  return {hyperbolic[0], b_scale};
}

}  // namespace fitspeed

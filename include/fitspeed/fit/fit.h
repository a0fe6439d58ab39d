// Fitting the throughput law to samples: options, results and reports.
//
// The default law is fitspeed's hyperbolic law (NIST Misra1d):
//   step time T(b) = b/v0 + t,  throughput v(b) = b/(b/v0 + t).
#ifndef FITSPEED_FIT_FIT_H_
#define FITSPEED_FIT_FIT_H_

#include <Eigen/Core>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/core/sample.h"

namespace fitspeed {

// What the residual of one point measures.
enum class Objective {
  kRelativeTime,        // predicted/observed step time - 1 (default; scale-free)
  kAbsoluteThroughput,  // predicted - observed samples/s (NIST's convention)
  kAbsoluteTime,        // predicted - observed seconds per step
};
std::string ObjectiveName(Objective objective);     // "relative-time", ...
Objective ParseObjective(const std::string& name);  // throws UsageError

// Robust loss applied to each squared residual.
enum class Loss { kSquared, kHuber, kCauchy };
std::string LossName(Loss loss);
Loss ParseLoss(const std::string& name);  // throws UsageError

// Names of the laws that can be fitted ("hyperbolic", "exponential", ...).
std::vector<std::string> LawNames();

struct FitOptions {
  // Law to fit: one of LawNames().
  std::string law = "hyperbolic";
  // Residual definition.
  Objective objective = Objective::kRelativeTime;
  // Robust loss; kSquared is ordinary least squares.
  Loss loss = Loss::kSquared;
  // Scale of the huber / cauchy loss, in the residual's unit; must be > 0.
  double loss_scale = 0.05;
  // Starting parameter values in the law's order; empty: a closed-form or
  // heuristic start from the data.
  std::vector<double> initial;
  // Solver iteration limit; must be >= 1.
  int max_iterations = 200;
  // Relative tolerances of the solver (Ceres function / parameter tolerances);
  // must be finite and >= 0.
  double function_tolerance = 1e-15;
  double parameter_tolerance = 1e-14;
  // Absolute tolerance on the projected gradient (Ceres gradient_tolerance);
  // must be finite and >= 0. Ceres's default 1e-10 stops too early for
  // parameters in the thousands, so the default leaves convergence to the two
  // relative tolerances above.
  double gradient_tolerance = 1e-30;
  // Confidence level of the reported intervals, in (0, 1).
  double confidence = 0.95;
  // Compute the leave-one-out prediction error (one re-fit per point).
  bool leave_one_out = true;
};

// Groups of up to this many points have their leave-one-out error from
// refits; larger ones from one step each (GroupFit::loo_one_step).
inline constexpr int kExactLeaveOneOutPoints = 2000;

// Throws UsageError naming the field, its value and the rule it broke.
void ValidateFitOptions(const FitOptions& options);

// One fitted parameter.
struct ParamEstimate {
  std::string name;  // "v0", "t", "vmax", "b_scale"
  std::string unit;  // "samples/s", "s", "samples" ("sequences/s", "tokens/s": see CountName)
  double value = 0;
  double std_error = 0;  // standard error: sqrt(s^2 * (J^T J)^-1_ii), s^2 = RSS/dof
  double ci_low = 0;     // confidence interval at FitOptions::confidence (t quantile)
  double ci_high = 0;
};

// One fitted point.
struct FitPoint {
  std::string source;
  int line = 0;
  double batch = 0;  // effective batch per step
  int devices = 1;
  double observed = 0;  // in the objective's quantity: samples/s or s
  double predicted = 0;
  double residual = 0;  // as defined by the objective
};

// The fit of one group.
struct GroupFit {
  GroupKey group;
  // Tokens per sequence shared by every sample of the group, when they state
  // one: the fit is then per sequence and tokens/s = v0 * seq_len.
  std::optional<double> seq_len;
  std::string law;
  Objective objective = Objective::kRelativeTime;
  Loss loss = Loss::kSquared;
  double loss_scale = 0;     // FitOptions::loss_scale (unused with kSquared)
  double confidence = 0.95;  // level of the parameters' ci_low / ci_high
  int n_points = 0;
  int dof = 0;             // n_points - parameters
  bool converged = false;  // the solver reported convergence
  bool usable = false;     // converged, finite, dof >= 1 and parameters within bounds
  int iterations = 0;      // solver iterations of the fit
  std::string solver_message;
  std::vector<ParamEstimate> params;
  // s^2 (J^T J)^-1 with s^2 = RSS/dof (NaN where dof = 0); with a robust loss
  // J and RSS carry the loss weights rho'(r^2) at the solution (see docs/fitting.md).
  Eigen::MatrixXd covariance;
  Eigen::MatrixXd correlation;  // covariance normalised to unit diagonal
  double rss = 0;               // sum of squared residuals (objective's unit squared)
  // 1 - RSS/TSS, TSS the RSS of the best constant prediction under the same
  // objective (the usual sum of squares about the mean for absolute objectives).
  double r2 = 0;
  double rel_rmse = 0;  // sqrt(mean((predicted/observed - 1)^2)) of throughput
  double aic = 0;       // n*ln(RSS/n) + 2p
  // Root mean square relative error of throughput when each point is predicted
  // by a fit without it; NaN when not computed (FitOptions::leave_one_out false),
  // when n_points < p + 2, or when leaving a point out leaves fewer distinct
  // batches than parameters.
  double loo_rel_rmse = 0;
  // How: false, each point's fit refitted without it (up to
  // kExactLeaveOneOutPoints points); true, above that, one Gauss-Newton step
  // from the full fit with the point's term removed (exact for a linear
  // model; the refits cost n fits of n points, ~45 min for 200,000 points).
  bool loo_one_step = false;
  // Hyperbolic-type laws: b_half = v0*t (v = v0/2) and b_90 = 9*b_half.
  // Other laws: the batch where the fitted throughput is half / 90% of its
  // asymptote. NaN where the law has no asymptote.
  double b_half = 0;
  double b_90 = 0;
  std::vector<std::string> warnings;
  std::vector<FitPoint> points;  // in input order

  // Value of the named parameter; throws std::out_of_range if absent.
  const ParamEstimate& Param(const std::string& name) const;
  // What the group's batches and rates count: "tokens" (unit tokens),
  // "sequences" (samples with a seq_len) or "samples".
  std::string CountName() const;
  // Fitted throughput (CountName()/s) and step time (s) at batch b.
  double PredictThroughput(double batch) const;
  double PredictStepTime(double batch) const;
  // The confidence interval at `level` of the fitted throughput at batch b
  // (the curve's band, not where single measurements fall): the delta method,
  // the law's gradient in its parameters by central differences with the
  // fit's covariance, and Student's t with the fit's dof. NaN for both ends
  // when the fit is not usable or its covariance is not finite.
  std::pair<double, double> ThroughputInterval(double batch, double level) const;

  std::string BriefReport() const;  // one line
  std::string FullReport() const;   // lmfit-like, several lines
};

// Fixed cost t against device count, for one label/precision (hyperbolic law).
struct DeviceScalingRow {
  int devices = 1;
  double t = 0, t_stderr = 0;
  double v0 = 0, v0_stderr = 0;
};
struct DeviceScaling {
  std::string label;
  std::string precision;
  std::string rate_unit = "samples/s";  // unit of v0
  std::vector<DeviceScalingRow> rows;   // by device count
};

struct FitResult {
  std::vector<GroupFit> fits;          // one per group, in key order
  std::vector<DeviceScaling> scaling;  // only for labels seen on >1 device count
  bool AllUsable() const;
  std::string BriefReport() const;
  std::string FullReport() const;
};

// Fits the law to the samples of one group (all samples are treated as one
// series regardless of their keys). Throws DataError when a sample is invalid
// or fewer distinct batch sizes than parameters are given; a fit that does not
// converge is reported in the result, not thrown.
GroupFit FitGroup(const std::vector<Sample>& samples, const FitOptions& options = {});

// Groups the samples by (devices, label, precision) and fits each group.
FitResult Fit(const std::vector<Sample>& samples, const FitOptions& options = {});

}  // namespace fitspeed

#endif  // FITSPEED_FIT_FIT_H_

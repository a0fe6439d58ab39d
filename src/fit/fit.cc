// The fitting engine: one template over the laws of laws.h, solved with Ceres
// (automatic differentiation, bounds, robust losses), and the law registry.
#include "fitspeed/fit/fit.h"

#include <ceres/ceres.h>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fit/laws.h"
#include "fit/registry.h"
#include "fit/solver_options.h"
#include "fit/statistics.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Warning thresholds; docs/fitting.md explains each.
constexpr double kMaxAbsCorrelation = 0.99;
constexpr double kRunsAlpha = 0.05;
constexpr double kCurvatureAlpha = 0.01;
// Residuals below this fraction of the observed scale are rounding, not signal:
// the trend tests are skipped for them.
constexpr double kRoundingLevel = 1e-9;
// A strict lower bound (value > lower) is enforced as value >= lower + this * |start|.
constexpr double kStrictMargin = 1e-12;
// Relative solver tolerance of the leave-one-out refits: each prediction is then
// good to ~1e-8, far below any prediction error worth reporting.
constexpr double kLooTolerance = 1e-10;
// A Gauss-Newton step below this relative size is rounding: no refinement.
constexpr double kNegligibleStep = 1e-14;

std::unique_ptr<ceres::LossFunction> MakeLoss(Loss loss, double scale) {
  switch (loss) {
    case Loss::kHuber:
      return std::make_unique<ceres::HuberLoss>(scale);
    case Loss::kCauchy:
      return std::make_unique<ceres::CauchyLoss>(scale);
    case Loss::kSquared:
      break;
  }
  return nullptr;
}

// The points of one group in the law's terms.
struct GroupData {
  std::vector<StepObservation> steps;
  std::vector<double> observed;                      // the objective's quantity per point
  std::vector<std::pair<double, int>> batch_counts;  // (distinct effective batch, points)
};

// The residual of one point (a residual block of its own, so that a robust
// loss applies to each point).
template <class Law>
struct PointResidual {
  double batch;
  double observed;
  Objective objective;
  template <typename T>
  bool operator()(const T* params, T* residual) const {
    using std::isfinite;
    residual[0] = ObjectiveResidual(objective, batch, observed, Law::Throughput(params, T(batch)));
    return isfinite(residual[0]);
  }
};

// The residuals of every point but `skip` as one block: with squared loss this
// gives the same problem as one block per point at a fraction of the overhead.
template <class Law>
struct GroupResiduals {
  const GroupData* data;
  Objective objective;
  int skip;
  template <typename T>
  bool operator()(const T* params, T* residuals) const {
    using std::isfinite;
    T* out = residuals;
    for (size_t i = 0; i < data->steps.size(); ++i) {
      if (static_cast<int>(i) == skip) continue;
      const double batch = data->steps[i].batch;
      *out =
          ObjectiveResidual(objective, batch, data->observed[i], Law::Throughput(params, T(batch)));
      if (!isfinite(*out++)) return false;
    }
    return true;
  }
};

// Solves one law on one group's points, optionally leaving one point out.
template <class Law>
class LawSolver {
 public:
  static constexpr int kP = Law::kNumParams;
  using Params = std::array<double, kP>;
  struct Outcome {
    Params params;
    bool converged = false;
    int iterations = 0;
    std::string message;
  };

  // `data` must outlive the solver.
  LawSolver(const GroupData& data, const FitOptions& options, const Params& lower)
      : data_(data),
        objective_(options.objective),
        loss_(MakeLoss(options.loss, options.loss_scale)),
        lower_(lower) {
    if (loss_ != nullptr) {
      const size_t n = data.steps.size();
      point_functors_.reserve(n);
      point_costs_.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        point_functors_.push_back({data.steps[i].batch, data.observed[i], objective_});
        point_costs_.emplace_back(&point_functors_.back(), ceres::DO_NOT_TAKE_OWNERSHIP);
      }
    }
    solver_options_ = QuietSolverOptions({options.max_iterations, options.function_tolerance,
                                          options.parameter_tolerance, options.gradient_tolerance});
  }
  LawSolver(const LawSolver&) = delete;
  LawSolver& operator=(const LawSolver&) = delete;

  const ceres::LossFunction* loss() const { return loss_.get(); }

  // Relative tolerances no tighter than `tolerance` from now on (for the
  // leave-one-out refits, whose predictions need far fewer digits).
  void LoosenTolerances(double tolerance) {
    solver_options_.function_tolerance = std::max(solver_options_.function_tolerance, tolerance);
    solver_options_.parameter_tolerance = std::max(solver_options_.parameter_tolerance, tolerance);
  }

  // Minimises from `start` over every point but `skip` (-1: none). Ceres's
  // bound constraints make a solve 1.3-6x slower even when they are inactive
  // (measured on 10 points), so the problem is first solved without them; only when that
  // optimum leaves the bounds (or fails) is it solved again with them. An
  // interior optimum satisfies the bounded problem's optimality conditions too.
  Outcome Solve(const Params& start, int skip) {
    Outcome outcome = SolveOnce(start, skip, false);
    bool inside = outcome.converged;
    for (int j = 0; j < kP; ++j) inside = inside && outcome.params[j] >= lower_[j];
    return inside ? outcome : SolveOnce(start, skip, true);
  }

 private:
  Outcome SolveOnce(const Params& start, int skip, bool bounded) {
    Outcome outcome;
    outcome.params = start;
    double* x = outcome.params.data();
    ceres::Problem::Options problem_options;
    problem_options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
    problem_options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
    problem_options.disable_all_safety_checks = true;
    ceres::Problem problem(problem_options);
    problem.AddParameterBlock(x, kP);
    const int n = static_cast<int>(data_.steps.size());
    GroupResiduals<Law> group{&data_, objective_, skip};
    ceres::AutoDiffCostFunction<GroupResiduals<Law>, ceres::DYNAMIC, kP> group_cost(
        &group, skip < 0 ? n : n - 1, ceres::DO_NOT_TAKE_OWNERSHIP);
    if (loss_ == nullptr) {
      problem.AddResidualBlock(&group_cost, nullptr, x);
    } else {
      for (int i = 0; i < n; ++i) {
        if (i != skip) problem.AddResidualBlock(&point_costs_[i], loss_.get(), x);
      }
    }
    if (bounded) {
      for (int j = 0; j < kP; ++j) problem.SetParameterLowerBound(x, j, lower_[j]);
    }
    ceres::Solver::Summary summary;
    ceres::Solve(solver_options_, &problem, &summary);
    outcome.converged = summary.termination_type == ceres::CONVERGENCE;
    outcome.iterations = static_cast<int>(summary.iterations.size()) - 1;
    outcome.message = summary.message;
    return outcome;
  }

  const GroupData& data_;
  Objective objective_;
  std::vector<PointResidual<Law>> point_functors_;
  std::vector<ceres::AutoDiffCostFunction<PointResidual<Law>, 1, kP>> point_costs_;
  std::unique_ptr<ceres::LossFunction> loss_;
  ceres::Solver::Options solver_options_;
  Params lower_;
};

// "a.csv", "a.csv, b.csv", "a.csv, b.csv, c.csv and 2 more".
std::string SourcesOf(const std::vector<Sample>& samples) {
  std::vector<std::string> sources;
  for (const Sample& s : samples) {
    if (std::find(sources.begin(), sources.end(), s.source) == sources.end()) {
      sources.push_back(s.source);
    }
  }
  std::string text;
  for (size_t i = 0; i < sources.size() && i < 3; ++i) {
    text += (i ? ", " : "") + (sources[i].empty() ? std::string("<input>") : sources[i]);
  }
  if (sources.size() > 3) text += fmt::format(" and {} more", sources.size() - 3);
  return text;
}

GroupData Prepare(const std::vector<Sample>& samples, Objective objective) {
  if (samples.empty()) throw DataError("<input>", 0, "", "no samples to fit");
  GroupData data;
  data.steps.reserve(samples.size());
  data.observed.reserve(samples.size());
  for (const Sample& sample : samples) {
    data.steps.push_back(ToStepObservation(sample));
    data.observed.push_back(ObservedQuantity(objective, data.steps.back()));
  }
  std::vector<double> batches;
  batches.reserve(data.steps.size());
  for (const StepObservation& step : data.steps) batches.push_back(step.batch);
  std::sort(batches.begin(), batches.end());
  for (double batch : batches) {
    if (data.batch_counts.empty() || data.batch_counts.back().first != batch) {
      data.batch_counts.emplace_back(batch, 0);
    }
    ++data.batch_counts.back().second;
  }
  return data;
}

// Throws DataError unless the group has at least as many distinct batches as
// the law has parameters.
void RequireIdentifiable(const std::vector<Sample>& samples, const GroupData& data,
                         const LawEntry& law) {
  const int distinct = static_cast<int>(data.batch_counts.size());
  if (distinct >= law.num_params) return;
  std::string names, batches;
  for (int j = 0; j < law.num_params; ++j) {
    names += (j == 0                    ? ""
              : j + 1 == law.num_params ? " and "
                                        : ", ") +
             std::string(law.params[j].name);
  }
  for (const auto& batch_count : data.batch_counts) {
    batches += fmt::format("{}{:g}", batches.empty() ? "" : ", ", batch_count.first);
  }
  const std::string why = distinct == 1
                              ? fmt::format(
                                    "a single batch size tells only the step time there, not how "
                                    "it splits into {}",
                                    names)
                              : fmt::format("{} batch sizes cannot identify {}", distinct, names);
  throw DataError(SourcesOf(samples), 0, "batch",
                  fmt::format("the {} samples of group '{}' have {} distinct batch size{} ({}), "
                              "but the {} law has {} parameters: {}; measure at least {} "
                              "different batch sizes",
                              samples.size(), GroupOf(samples.front()).ToString(), distinct,
                              distinct == 1 ? "" : "s", batches, law.name, law.num_params, why,
                              law.num_params));
}

// Standard errors, intervals, correlation, goodness of fit and the trend tests
// from the (loss-weighted) Jacobian and residuals at the solution.
void Summarize(GroupFit& fit, const Eigen::MatrixXd& jacobian, const Eigen::VectorXd& residuals,
               const Eigen::VectorXd& weights, const std::vector<double>& observed,
               const FitOptions& options) {
  const int n = fit.n_points;
  const int p = static_cast<int>(jacobian.cols());
  fit.rss = residuals.squaredNorm();
  fit.r2 = 1 - fit.rss / ConstantModelRss(fit.objective, observed);
  fit.aic = n * std::log(fit.rss / n) + 2 * p;

  // Covariance s^2 (J^T J)^-1 (NIST StRD, lmfit, scipy curve_fit), from the QR
  // decomposition J P = Q R: (J^T J)^-1 = P R^-1 R^-T P^T.
  const Eigen::VectorXd root_w = weights.cwiseSqrt();
  const Eigen::MatrixXd jw = root_w.asDiagonal() * jacobian;
  const Eigen::VectorXd rw = root_w.cwiseProduct(residuals);
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(jw);
  fit.covariance = Eigen::MatrixXd::Constant(p, p, kNaN);
  fit.correlation = Eigen::MatrixXd::Constant(p, p, kNaN);
  if (qr.rank() == p) {
    const Eigen::MatrixXd r_inverse =
        qr.matrixR().topLeftCorner(p, p).triangularView<Eigen::Upper>().solve(
            Eigen::MatrixXd::Identity(p, p));
    const Eigen::MatrixXd unscaled = qr.colsPermutation() * (r_inverse * r_inverse.transpose()) *
                                     qr.colsPermutation().transpose();
    const Eigen::VectorXd inv_sd = unscaled.diagonal().cwiseSqrt().cwiseInverse();
    fit.correlation = inv_sd.asDiagonal() * unscaled * inv_sd.asDiagonal();
    if (fit.dof > 0) fit.covariance = unscaled * (rw.squaredNorm() / fit.dof);
  } else {
    fit.warnings.push_back(
        "the Jacobian is rank deficient at the solution: the parameters are not determined "
        "separately and no uncertainty can be given");
  }
  const double t_quantile = StudentTQuantile(0.5 * (1 + options.confidence), fit.dof);
  for (int j = 0; j < p; ++j) {
    ParamEstimate& param = fit.params[j];
    param.std_error = std::sqrt(fit.covariance(j, j));
    param.ci_low = param.value - t_quantile * param.std_error;
    param.ci_high = param.value + t_quantile * param.std_error;
  }

  if (fit.dof == 0) {
    fit.warnings.push_back(fmt::format(
        "{} points for {} parameters leave no degrees of freedom: the curve passes through "
        "every point and no uncertainty can be estimated",
        n, p));
  } else if (fit.dof < 2) {
    fit.warnings.push_back(fmt::format(
        "only {} degree of freedom ({} points, {} parameters): the uncertainty rests on a "
        "single residual",
        fit.dof, n, p));
  }
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      const double corr = fit.correlation(a, b);
      if (std::fabs(corr) > kMaxAbsCorrelation) {
        fit.warnings.push_back(fmt::format(
            "{} and {} are strongly correlated (corr = {:+.4f}, |corr| > {}): the data do not "
            "separate them; measure over a wider range of batch sizes",
            fit.params[a].name, fit.params[b].name, corr, kMaxAbsCorrelation));
      }
    }
  }

  // Trend tests on the residuals ordered by batch, unless they are rounding noise.
  double scale = 1;
  if (fit.objective != Objective::kRelativeTime) {
    scale = 0;
    for (double y : observed) scale += y * y;
    scale = std::sqrt(scale / n);
  }
  if (!(std::sqrt(fit.rss / n) > kRoundingLevel * scale)) return;

  // Runs test on the signs of the mean residual per distinct batch (repeats at
  // one batch have no order among themselves).
  std::vector<std::pair<double, double>> by_batch;  // (batch, residual), sorted
  by_batch.reserve(n);
  for (const FitPoint& point : fit.points) by_batch.emplace_back(point.batch, point.residual);
  std::sort(by_batch.begin(), by_batch.end());
  std::vector<bool> signs;
  for (size_t i = 0; i < by_batch.size();) {
    double sum = 0;
    const double batch = by_batch[i].first;
    for (; i < by_batch.size() && by_batch[i].first == batch; ++i) sum += by_batch[i].second;
    if (sum != 0) signs.push_back(sum > 0);
  }
  const RunsTest runs = WaldWolfowitzRuns(signs);
  if (runs.p_few_runs < kRunsAlpha) {
    fit.warnings.push_back(fmt::format(
        "the residuals have a trend the law does not explain: their signs ordered by batch "
        "form {} runs ({} positive, {} negative batches); Wald-Wolfowitz runs test p = {:.2g} "
        "(fewer runs than chance)",
        runs.runs, runs.positive, runs.negative, runs.p_few_runs));
  }

  // Curvature: does a term z = (ln b - mean ln b)^2 added to the linearised law
  // reduce the RSS? With r and z projected off the columns of J (r_, z_):
  // RSS1 = RSS0 - (r_.z_)^2/|z_|^2, F = (RSS0 - RSS1) / (RSS1/(n-p-1)) ~ F(1, n-p-1).
  const int dof1 = n - p - 1;
  if (dof1 < 1 || qr.rank() != p) return;
  Eigen::VectorXd z(n);
  double mean_log = 0;
  for (int i = 0; i < n; ++i) mean_log += std::log(fit.points[i].batch) / n;
  for (int i = 0; i < n; ++i) {
    const double d = std::log(fit.points[i].batch) - mean_log;
    z(i) = root_w(i) * d * d;
  }
  const Eigen::VectorXd z_off = z - jw * qr.solve(z);
  if (!(z_off.norm() > 1e-8 * z.norm())) return;  // z lies in the span of J
  const Eigen::VectorXd r_off = rw - jw * qr.solve(rw);
  const double rss0 = r_off.squaredNorm();
  const double explained = std::pow(r_off.dot(z_off), 2) / z_off.squaredNorm();
  const double rss1 = rss0 - explained;
  if (!(rss1 > 0)) return;
  const double f = explained / (rss1 / dof1);
  const double p_value = FUpperTail(f, 1, dof1);
  if (p_value < kCurvatureAlpha) {
    fit.warnings.push_back(fmt::format(
        "the residuals curve against ln(batch) in a way the law does not explain: a term "
        "(ln b - mean)^2 added to the fit explains {:.0f}% of the RSS (curvature F-test "
        "F(1, {}) = {:.3g}, p = {:.2g})",
        100 * explained / rss0, dof1, f, p_value));
  }
}

// Residuals, Jacobian and robust-loss weights rho'(r^2) at `params`.
struct Linearization {
  Eigen::MatrixXd jacobian;
  Eigen::VectorXd residuals;
  Eigen::VectorXd weights;
};

template <class Law>
Linearization Linearize(const GroupData& data, Objective objective, const ceres::LossFunction* loss,
                        const std::array<double, Law::kNumParams>& params) {
  constexpr int kP = Law::kNumParams;
  using Jet = ceres::Jet<double, kP>;
  const Eigen::Index n = static_cast<Eigen::Index>(data.steps.size());
  Linearization at{Eigen::MatrixXd(n, kP), Eigen::VectorXd(n), Eigen::VectorXd::Ones(n)};
  std::array<Jet, kP> jet_params;
  for (int j = 0; j < kP; ++j) jet_params[j] = Jet(params[j], j);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double batch = data.steps[i].batch;
    const Jet r = ObjectiveResidual(objective, batch, data.observed[i],
                                    Law::Throughput(jet_params.data(), Jet(batch)));
    at.residuals(i) = r.a;
    at.jacobian.row(i) = r.v.transpose();
    if (loss != nullptr) {
      double rho[3];
      loss->Evaluate(r.a * r.a, rho);
      at.weights(i) = rho[1];
    }
  }
  return at;
}

// The (reweighted) Gauss-Newton step -(W^1/2 J)^+ W^1/2 r at `params`.
template <class Law>
Eigen::VectorXd GaussNewtonStep(const GroupData& data, Objective objective,
                                const ceres::LossFunction* loss,
                                const std::array<double, Law::kNumParams>& params) {
  const Linearization at = Linearize<Law>(data, objective, loss, params);
  const Eigen::VectorXd root_w = at.weights.cwiseSqrt();
  return (root_w.asDiagonal() * at.jacobian)
      .householderQr()
      .solve(-root_w.cwiseProduct(at.residuals));
}

// Refines a converged solution with Gauss-Newton steps while each step shrinks.
// Near the optimum the trust-region solver compares costs whose rounding noise
// exceeds the decrease left along a flat (correlated) direction, and stops up to
// ~1e-9 short; the Gauss-Newton step needs only the gradient, which is still
// accurate there. Steps that would leave the bounds are not taken.
template <class Law>
std::array<double, Law::kNumParams> Refine(const GroupData& data, Objective objective,
                                           const ceres::LossFunction* loss,
                                           const std::array<double, Law::kNumParams>& lower,
                                           std::array<double, Law::kNumParams> params) {
  constexpr int kP = Law::kNumParams;
  auto relative_size = [&params](const Eigen::VectorXd& step) {
    double size = 0;
    for (int j = 0; j < kP; ++j) size = std::max(size, std::fabs(step(j)) / std::fabs(params[j]));
    return size;
  };
  Eigen::VectorXd step = GaussNewtonStep<Law>(data, objective, loss, params);
  for (int k = 0; k < 3 && step.allFinite() && relative_size(step) > kNegligibleStep; ++k) {
    std::array<double, kP> candidate = params;
    for (int j = 0; j < kP; ++j) candidate[j] += step(j);
    for (int j = 0; j < kP; ++j) {
      if (!(candidate[j] > lower[j])) return params;
    }
    const Eigen::VectorXd next = GaussNewtonStep<Law>(data, objective, loss, candidate);
    if (!(relative_size(next) < relative_size(step))) break;
    params = candidate;
    step = next;
  }
  return params;
}

// The seq_len every sample states, or none when one lacks it or they differ.
std::optional<double> CommonSeqLen(const std::vector<Sample>& samples) {
  std::optional<double> common = samples.front().seq_len;
  for (const Sample& s : samples) {
    if (s.seq_len != common) return std::nullopt;
  }
  return common;
}

// A law's unit with its "samples" replaced by what the group counts.
std::string InCount(std::string unit, const std::string& count) {
  const std::string samples = "samples";
  if (unit.compare(0, samples.size(), samples) == 0) unit.replace(0, samples.size(), count);
  return unit;
}

template <class Law>
GroupFit FitLaw(const std::vector<Sample>& samples, const FitOptions& options) {
  constexpr int kP = Law::kNumParams;
  using Solver = LawSolver<Law>;
  using Params = typename Solver::Params;
  const GroupData data = Prepare(samples, options.objective);
  RequireIdentifiable(samples, data, *FindLaw(Law::kName));
  const int n = static_cast<int>(samples.size());

  GroupFit fit;
  fit.group = GroupOf(samples.front());
  fit.seq_len = CommonSeqLen(samples);
  fit.law = Law::kName;
  fit.objective = options.objective;
  fit.loss = options.loss;
  fit.loss_scale = options.loss_scale;
  fit.confidence = options.confidence;
  fit.n_points = n;
  fit.dof = n - kP;

  Params start;
  if (options.initial.empty()) {
    start = Law::Start(data.steps, options.objective);
  } else {
    std::copy(options.initial.begin(), options.initial.end(), start.begin());
  }
  Params lower;
  for (int j = 0; j < kP; ++j) {
    const ParamSpec& spec = Law::kParams[j];
    lower[j] = spec.lower + (spec.strict ? kStrictMargin * std::fabs(start[j]) : 0.0);
    if (!std::isfinite(start[j])) start[j] = 1;  // degenerate data: let the solver try
    start[j] = std::max(start[j], lower[j]);
  }
  Solver solver(data, options, lower);
  const typename Solver::Outcome outcome = solver.Solve(start, -1);
  const Params p = outcome.converged
                       ? Refine<Law>(data, options.objective, solver.loss(), lower, outcome.params)
                       : outcome.params;
  fit.converged = outcome.converged;
  fit.iterations = outcome.iterations;
  fit.solver_message = outcome.message;
  if (!fit.converged) {
    fit.warnings.push_back("the solver did not converge: " + outcome.message);
  }
  fit.params.reserve(kP);
  for (int j = 0; j < kP; ++j) {
    fit.params.push_back({Law::kParams[j].name, InCount(Law::kParams[j].unit, fit.CountName()),
                          p[j], kNaN, kNaN, kNaN});
  }

  // Points and the relative error of throughput.
  double rel_sq_sum = 0;
  fit.points.reserve(n);
  for (int i = 0; i < n; ++i) {
    const StepObservation& step = data.steps[i];
    const double v = Law::Throughput(p.data(), step.batch);
    FitPoint point{
        samples[i].source, samples[i].line, step.batch, samples[i].devices, data.observed[i], 0, 0};
    point.predicted = options.objective == Objective::kAbsoluteThroughput ? v : step.batch / v;
    point.residual = ObjectiveResidual(options.objective, step.batch, data.observed[i], v);
    fit.points.push_back(std::move(point));
    const double rel = v / step.throughput_sps() - 1;
    rel_sq_sum += rel * rel;
  }
  fit.rel_rmse = std::sqrt(rel_sq_sum / n);

  // Bounds: a strict bound reached means the law degenerated.
  bool at_strict_bound = false;
  for (int j = 0; j < kP; ++j) {
    if (p[j] > lower[j]) continue;
    const ParamSpec& spec = Law::kParams[j];
    at_strict_bound = at_strict_bound || spec.strict;
    fit.warnings.push_back(
        spec.strict
            ? fmt::format("{} fell to its lower limit (must be > {:g}): the law does not fit "
                          "these data",
                          spec.name, spec.lower)
            : fmt::format("{} is at its lower bound {:g} {}: the standard errors assume an "
                          "interior optimum and are only indicative",
                          spec.name, spec.lower, spec.unit));
  }

  const Linearization at = Linearize<Law>(data, options.objective, solver.loss(), p);
  Summarize(fit, at.jacobian, at.residuals, at.weights, data.observed, options);

  const double asymptote = Law::Asymptote(p.data());
  fit.b_half = Law::BatchAtFraction(p.data(), 0.5);
  fit.b_90 = Law::BatchAtFraction(p.data(), 0.9);
  int above = 0;
  int worst = -1;
  for (int i = 0; i < n; ++i) {
    const double v = data.steps[i].throughput_sps();
    if (!(v > asymptote)) continue;
    ++above;
    if (worst < 0 || v > data.steps[worst].throughput_sps()) worst = i;
  }
  if (above > 0) {
    const FitPoint& point = fit.points[worst];
    fit.warnings.push_back(fmt::format(
        "{} observation{} above the fitted asymptote {:.6g} {}/s (largest {:.6g} "
        "{}/s, +{:.2g}%, at batch {:g}, {}:{}): the law saturates below what was measured",
        above, above == 1 ? " lies" : "s lie", asymptote, fit.CountName(),
        data.steps[worst].throughput_sps(), fit.CountName(),
        100 * (data.steps[worst].throughput_sps() / asymptote - 1), point.batch, point.source,
        point.line));
  }

  // Leave-one-out: refit without each point (from the full solution) and
  // predict its throughput. Needs every reduced set to stay identifiable.
  // Past kExactLeaveOneOutPoints the n refits of n points (O(n^2)) give way to
  // one reweighted Gauss-Newton step per point from the full solution: with
  // H = J^T W J and the gradient zero there, leaving point i out leaves the
  // gradient -w_i r_i j_i, and the step is (H - w_i j_i j_i^T)^-1 w_i r_i j_i.
  fit.loo_rel_rmse = kNaN;
  bool loo_possible = options.leave_one_out && n >= kP + 2;
  for (const auto& [batch, count] : data.batch_counts) {
    if (count == 1 && static_cast<int>(data.batch_counts.size()) <= kP) loo_possible = false;
  }
  if (loo_possible && n > kExactLeaveOneOutPoints) {
    fit.loo_one_step = true;
    const Eigen::MatrixXd h = at.jacobian.transpose() * at.weights.asDiagonal() * at.jacobian;
    double sum = 0;
    int counted = 0;
    for (int i = 0; i < n; ++i) {
      const Eigen::VectorXd j = at.jacobian.row(i).transpose();
      const double w = at.weights(i);
      const Eigen::MatrixXd reduced = h - w * j * j.transpose();
      const Eigen::VectorXd step = reduced.ldlt().solve(w * at.residuals(i) * j);
      Params without = p;
      for (int k = 0; k < kP; ++k) without[k] = std::max(lower[k], p[k] + step(k));
      const double v = Law::Throughput(without.data(), data.steps[i].batch);
      const double rel = v / data.steps[i].throughput_sps() - 1;
      if (!std::isfinite(rel)) continue;
      sum += rel * rel;
      ++counted;
    }
    if (counted == n) fit.loo_rel_rmse = std::sqrt(sum / n);
  } else if (loo_possible) {
    solver.LoosenTolerances(kLooTolerance);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      const typename Solver::Outcome without = solver.Solve(p, i);
      const double v = Law::Throughput(without.params.data(), data.steps[i].batch);
      const double rel = v / data.steps[i].throughput_sps() - 1;
      sum += rel * rel;
    }
    fit.loo_rel_rmse = std::sqrt(sum / n);
  }

  bool finite = std::isfinite(fit.rss);
  for (const ParamEstimate& param : fit.params) finite = finite && std::isfinite(param.value);
  fit.usable =
      fit.converged && finite && fit.dof >= 1 && !at_strict_bound && fit.covariance.allFinite();
  return fit;
}

template <class Law>
LawEntry MakeLawEntry() {
  return {Law::kName,
          Law::kFormula,
          Law::kNumParams,
          Law::kParams.data(),
          [](const double* params, double batch) { return Law::Throughput(params, batch); },
          &Law::Asymptote,
          &Law::BatchAtFraction,
          &FitLaw<Law>};
}

// Hyperbolic v0, t of a group (refitted with the hyperbolic law if needed).
DeviceScalingRow ScalingRow(const GroupFit& fit, const std::vector<Sample>& samples,
                            const FitOptions& options) {
  GroupFit hyperbolic;
  const GroupFit* source = &fit;
  if (fit.law != HyperbolicLaw::kName) {
    FitOptions refit = options;
    refit.law = HyperbolicLaw::kName;
    refit.initial.clear();
    refit.leave_one_out = false;
    hyperbolic = FitGroup(samples, refit);
    source = &hyperbolic;
  }
  const ParamEstimate& v0 = source->Param("v0");
  const ParamEstimate& t = source->Param("t");
  return {fit.group.devices, t.value, t.std_error, v0.value, v0.std_error};
}

}  // namespace

const std::vector<LawEntry>& Laws() {
  static const std::vector<LawEntry> laws = {
      MakeLawEntry<HyperbolicLaw>(),
      MakeLawEntry<ExponentialLaw>(),
  };
  return laws;
}

const LawEntry* FindLaw(const std::string& name) {
  for (const LawEntry& law : Laws()) {
    if (name == law.name) return &law;
  }
  return nullptr;
}

const ParamEstimate& GroupFit::Param(const std::string& name) const {
  for (const ParamEstimate& param : params) {
    if (param.name == name) return param;
  }
  throw std::out_of_range(fmt::format("the {} fit has no parameter '{}'", law, name));
}

double GroupFit::PredictThroughput(double batch) const {
  const LawEntry* entry = FindLaw(law);
  if (entry == nullptr || static_cast<int>(params.size()) != entry->num_params) return kNaN;
  std::vector<double> values;
  for (const ParamEstimate& param : params) values.push_back(param.value);
  return entry->throughput(values.data(), batch);
}

std::string GroupFit::CountName() const {
  if (group.unit == Unit::kTokens) return "tokens";
  return seq_len ? "sequences" : "samples";
}

double GroupFit::PredictStepTime(double batch) const { return batch / PredictThroughput(batch); }

std::pair<double, double> GroupFit::ThroughputInterval(double batch, double level) const {
  const LawEntry* entry = FindLaw(law);
  const auto n = static_cast<Eigen::Index>(params.size());
  if (!usable || dof < 1 || entry == nullptr || entry->num_params != n || covariance.rows() != n ||
      covariance.cols() != n || !covariance.allFinite() || !(level > 0 && level < 1)) {
    return {kNaN, kNaN};
  }
  std::vector<double> values;
  for (const ParamEstimate& param : params) values.push_back(param.value);
  const double v = entry->throughput(values.data(), batch);
  Eigen::VectorXd gradient(n);
  for (Eigen::Index k = 0; k < n; ++k) {
    // A step of the parameter's scale (its standard error, else its value).
    const double scale = std::max(std::abs(params[k].std_error), 1e-8 * std::abs(values[k]));
    const double h = (scale > 0 ? scale : 1e-8) * 1e-3;
    std::vector<double> up = values, down = values;
    up[k] += h;
    down[k] -= h;
    gradient(k) =
        (entry->throughput(up.data(), batch) - entry->throughput(down.data(), batch)) / (2 * h);
  }
  const double variance = gradient.dot(covariance * gradient);
  const double half = StudentTQuantile(0.5 * (1 + level), dof) * std::sqrt(std::max(0.0, variance));
  if (!std::isfinite(v) || !std::isfinite(half)) return {kNaN, kNaN};
  return {v - half, v + half};
}

bool FitResult::AllUsable() const {
  return std::all_of(fits.begin(), fits.end(), [](const GroupFit& f) { return f.usable; });
}

GroupFit FitGroup(const std::vector<Sample>& samples, const FitOptions& options) {
  ValidateFitOptions(options);
  return FindLaw(options.law)->fit(samples, options);
}

FitResult Fit(const std::vector<Sample>& samples, const FitOptions& options) {
  ValidateFitOptions(options);
  if (samples.empty()) throw DataError("<input>", 0, "", "no samples to fit");
  FitResult result;
  // One group (most logs): fitted as it is, without a copy of its samples.
  const GroupKey first = GroupOf(samples.front());
  if (std::all_of(samples.begin(), samples.end(), [&](const Sample& s) {
        return s.devices == first.devices && s.unit == first.unit && s.label == first.label &&
               s.precision == first.precision;
      })) {
    result.fits.push_back(FitGroup(samples, options));
    return result;
  }
  const auto groups = GroupSamples(samples);
  for (const auto& [key, members] : groups) result.fits.push_back(FitGroup(members, options));

  // Device scaling: for each (label, precision, unit), the groups by device count.
  std::map<std::tuple<std::string, std::string, Unit>, std::vector<size_t>> series;
  for (size_t g = 0; g < groups.size(); ++g) {
    const GroupKey& key = groups[g].first;
    series[{key.label, key.precision, key.unit}].push_back(g);
  }
  for (const auto& [name, members] : series) {
    if (members.size() < 2) continue;  // groups are unique per device count
    DeviceScaling scaling{
        std::get<0>(name), std::get<1>(name), result.fits[members.front()].CountName() + "/s", {}};
    for (size_t g : members) {
      scaling.rows.push_back(ScalingRow(result.fits[g], groups[g].second, options));
    }
    result.scaling.push_back(std::move(scaling));
  }
  return result;
}

}  // namespace fitspeed

// Calibration of a device to measured cases (docs/devices.md, "Calibration").
//
// The modeled step of one case (fitspeed/device/step_model.h) is, as a
// function of the five calibration parameters,
//   T(sc, sm, launch, host, st) = sum over passes n_k max(C_k / s_k, M_k / sm)
//                                 + L / sm + K launch + comm + host A / steps_per_execution
// where C_k and M_k are the pass's compute and memory times on the device as
// given (a scale s on an efficiency curve multiplies every point, so the
// interpolated efficiency too, and divides the time), s_k is st for matrix
// work on tensor units (TF32, FP16/BF16) and sc for the rest (st follows sc when it is not
// fitted and the device has no tensor curve of its own, as ModelStep then
// uses the compute curve for both), L the memory time of layout transposes,
// K the number of kernels (passes that do work, and transposes) and comm the
// all-reduce time; with gradient accumulation over A micro-batches, n_k = A
// for forward and backward passes (L and K count them A times) and 1 for the
// update, and the host is called once per micro-batch. The pieces come from one
// ModelStep per case; the sum and its derivatives are written once
// (DecomposedStepTime), and the calibrated device is checked against ModelStep.
#include "fitspeed/calibrate/calibrate.h"

#include <ceres/ceres.h>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "core/table.h"
#include "device/calibration_terms.h"
#include "fit/dense_jacobian.h"
#include "fit/solver_options.h"
#include "fit/statistics.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {

namespace {

using calibration::Apply;
using calibration::kInfo;
using calibration::kParams;
using calibration::MarkScaledCurves;
using calibration::MaxComputeEfficiency;
using calibration::MaxEfficiency;
using calibration::MaxMemoryEfficiency;
using calibration::Values;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Parameters correlated beyond this are reported as not separated by the data.
constexpr double kMaxAbsCorrelation = 0.99;
// Relative agreement required between the decomposed step time and ModelStep
// on the calibrated device (rounding of the scaled curve points only).
constexpr double kAgreement = 1e-9;

// The pieces of one case's modeled step on the device as given.
struct CaseTerms {
  struct Pass {
    double compute_s = 0;
    double memory_s = 0;
    bool tensor_units = false;  // matrix work on tensor units
    double count = 1;           // runs per step (gradient accumulation's micro-batches)
  };
  std::vector<Pass> passes;
  // The 16-bit matrix work scales with sc (st is not fitted and the device has
  // no tensor curve: ModelStep uses the compute curve for it).
  bool tensor_follows_compute = false;
  double kernels = 0;          // kernels launched: passes, layout transposes and AMP casts
  double extra_memory_s = 0;   // layout transposes' and AMP casts' memory time (scales with sm)
  double comm_s = 0;           // all-reduce time, independent of the parameters
  double host_per_step = 1;    // accumulation / steps_per_execution
  double measured_step_s = 0;  // accumulation x batch / throughput
  // Overheads not fitted stay the case's own device's: launch and host enter
  // the sum as parameters only when fitted, else as this fixed time.
  bool launch_fitted = false;
  bool host_fitted = false;
  double fixed_overhead_s = 0;
};

// T(sc, sm, launch, host, st) of the file comment at x (launch and host in
// the solver's units, kInfo), and where `gradient` is given its derivatives
// with respect to x. They are written by hand, with the operations and in the
// order Ceres's Jet arithmetic (ceres/jet.h) computed them when this sum was
// differentiated automatically, so the fits did not change by a bit: x / s
// gives -x / (s * s) per unit of s, n x gives n times it. Under the
// sanitizers' -O1 the Jet arithmetic was not inlined and took 55% of
// `validate intervals` (24 s; .ci/run, bench/README.md "Build time").
double DecomposedStepTime(const CaseTerms& terms, const Values& x, Values* gradient) {
  const double memory_scale = x[1];
  const double launch_s = x[2] * kInfo[2].internal_unit;
  const double host_s = x[3] * kInfo[3].internal_unit;
  // Matrix work on tensor units scales with st, or with sc where st follows it.
  const size_t tensor_index = terms.tensor_follows_compute ? 0 : 4;
  Values d{};
  double sum = terms.comm_s + terms.fixed_overhead_s;
  for (const CaseTerms::Pass& pass : terms.passes) {
    const size_t k = pass.tensor_units ? tensor_index : 0;
    const double scale = x[k];
    const double compute = pass.compute_s / scale;
    const double memory = pass.memory_s / memory_scale;
    if (compute > memory) {
      sum += pass.count * compute;
      d[k] += -pass.compute_s / (scale * scale) * pass.count;
    } else {
      sum += pass.count * memory;
      d[1] += -pass.memory_s / (memory_scale * memory_scale) * pass.count;
    }
  }
  sum += terms.extra_memory_s / memory_scale;
  d[1] += -terms.extra_memory_s / (memory_scale * memory_scale);
  if (terms.launch_fitted) {
    sum += terms.kernels * launch_s;
    d[2] += kInfo[2].internal_unit * terms.kernels;
  }
  if (terms.host_fitted) {
    sum += terms.host_per_step * host_s;
    d[3] += kInfo[3].internal_unit * terms.host_per_step;
  }
  if (gradient != nullptr) *gradient = d;
  return sum;
}

double StepTime(const CaseTerms& terms, const Values& x) {
  return DecomposedStepTime(terms, x, nullptr);
}

// Residual: log(modeled / measured step time), scale-free and symmetric; one
// scalar parameter block per calibration parameter.
class LogRatioResidual : public ceres::SizedCostFunction<1, 1, 1, 1, 1, 1> {
 public:
  explicit LogRatioResidual(const CaseTerms* terms) : terms_(terms) {}

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    Values x{};
    for (int j = 0; j < kParams; ++j) x[j] = parameters[j][0];
    Values d{};
    const double step = DecomposedStepTime(*terms_, x, &d);
    if (jacobians == nullptr) {
      residuals[0] = std::log(step / terms_->measured_step_s);
      return true;
    }
    // As the Jets did: the ratio times 1 / measured, d log r = dr x (1 / r).
    const double inverse_measured = 1.0 / terms_->measured_step_s;
    const double ratio = step * inverse_measured;
    residuals[0] = std::log(ratio);
    const double inverse_ratio = 1.0 / ratio;
    for (int j = 0; j < kParams; ++j) {
      if (jacobians[j] != nullptr) jacobians[j][0] = d[j] * inverse_measured * inverse_ratio;
    }
    return true;
  }

 private:
  const CaseTerms* terms_;
};

struct Bounds {
  Values lower{};
  Values upper{};
};

struct Solution {
  Values x{};
  bool converged = false;
  int iterations = 0;
  std::string message;
  Eigen::MatrixXd jacobian;  // cases x free parameters, internal units
  Eigen::VectorXd residuals;
};

// Bounded least squares of the log ratios of `terms` over the free parameters,
// from `start`.
Solution Solve(const std::vector<const CaseTerms*>& terms, const Values& start,
               const std::array<bool, kParams>& free, const Bounds& bounds, int max_iterations) {
  Solution s;
  s.x = start;
  ceres::Problem problem;
  for (int j = 0; j < kParams; ++j) {
    problem.AddParameterBlock(&s.x[j], 1);
    if (!free[j]) {
      problem.SetParameterBlockConstant(&s.x[j]);
      continue;
    }
    problem.SetParameterLowerBound(&s.x[j], 0, bounds.lower[j]);
    if (std::isfinite(bounds.upper[j])) problem.SetParameterUpperBound(&s.x[j], 0, bounds.upper[j]);
  }
  for (const CaseTerms* t : terms) {
    problem.AddResidualBlock(new LogRatioResidual(t), nullptr, &s.x[0], &s.x[1], &s.x[2], &s.x[3],
                             &s.x[4]);
  }
  ceres::Solver::Summary summary;
  ceres::Solve(QuietSolverOptions({max_iterations, 1e-14, 1e-12, 1e-16}), &problem, &summary);
  s.converged = summary.IsSolutionUsable() && summary.termination_type == ceres::CONVERGENCE;
  s.iterations = static_cast<int>(summary.iterations.size()) - 1;
  s.message = summary.message;

  ceres::Problem::EvaluateOptions evaluate;
  for (int j = 0; j < kParams; ++j) {
    if (free[j]) evaluate.parameter_blocks.push_back(&s.x[j]);
  }
  std::vector<double> residuals;
  ceres::CRSMatrix crs;
  problem.Evaluate(evaluate, nullptr, &residuals, nullptr, &crs);
  s.residuals = Eigen::Map<const Eigen::VectorXd>(residuals.data(),
                                                  static_cast<Eigen::Index>(residuals.size()));
  s.jacobian = DenseJacobian(crs);
  return s;
}

// ModelStep of a case, with a problem the device or network cannot model
// reported as bad data at the case's file and line.
ModeledStep ModelCase(const Network& network, const Device& device, const MeasuredCase& c,
                      Optimizer optimizer) {
  try {
    return ModelStep(network, device, c.batch, CaseModelOptions(c, optimizer));
  } catch (const UsageError& e) {
    throw DataError(c.source, c.line, "", fmt::format("cannot model this case: {}", e.what()));
  }
}

CaseTerms Terms(const ModeledStep& step, const MeasuredCase& c, const DeviceModelOptions& o,
                const Device& device, const std::array<bool, kParams>& free) {
  CaseTerms t;
  t.tensor_follows_compute = !free[4] && device.tensor_efficiency.points.empty();
  t.launch_fitted = free[2];
  t.host_fitted = free[3];
  // Gradient accumulation runs the forward and backward passes once per
  // micro-batch, the update once per step (ModelStep).
  const double micro = o.accumulation;
  for (const LayerTime& layer : step.layers) {
    for (size_t i = 0; i < layer.passes.size(); ++i) {
      const PassTime& p = layer.passes[i];
      const double count = static_cast<Pass>(i) == Pass::kUpdate ? 1 : micro;
      if (p.flops > 0 || p.bytes > 0) {
        t.passes.push_back({p.compute_s, p.memory_s, p.tensor_units, count});
        t.kernels += count * p.kernels;
      }
      t.extra_memory_s += count * (p.layout_memory_s + p.cast_memory_s);
      t.kernels += count * (p.layout_kernels + p.cast_kernels);
    }
  }
  t.comm_s = step.comm_s;
  t.host_per_step = micro / o.steps_per_execution;
  t.measured_step_s = micro * static_cast<double>(c.batch) / c.throughput_sps;
  if (!t.launch_fitted) t.fixed_overhead_s += t.kernels * device.kernel_launch_s;
  if (!t.host_fitted) t.fixed_overhead_s += t.host_per_step * device.step_host_s;
  return t;
}

// The network of a case, loaded once into `networks`, after checking the
// case's batch and throughput; DataError naming the case's file and line.
const Network& CaseNetwork(std::map<std::string, Network>& networks, const MeasuredCase& c) {
  if (c.batch < 1) throw DataError(c.source, c.line, "batch", "must be >= 1");
  if (!(c.throughput_sps > 0) || !std::isfinite(c.throughput_sps)) {
    throw DataError(c.source, c.line, "throughput_sps", "must be finite and > 0");
  }
  const std::string key = CaseNetworkKey(c);
  auto it = networks.find(key);
  if (it == networks.end()) {
    try {
      it = networks.emplace(key, LoadNetwork(c.network, CaseZooOptions(c))).first;
    } catch (const UsageError& e) {
      throw DataError(c.source, c.line, "network", e.what());
    }
  }
  return it->second;
}

// Parameter j (kInfo order) at `x`, in SI units, with its start and bounds;
// std_error and interval NaN (set by the caller that estimates them).
CalibratedParameter FittedParameter(int j, const Values& start, const Values& x,
                                    const Bounds& bounds) {
  const double unit = kInfo[j].internal_unit;
  CalibratedParameter p;
  p.name = kInfo[j].name;
  p.unit = kInfo[j].unit;
  p.initial = start[j] * unit;
  p.value = x[j] * unit;
  p.std_error = kNaN;
  p.ci_low = kNaN;
  p.ci_high = kNaN;
  p.lower = bounds.lower[j] * unit;
  p.upper = bounds.upper[j] * unit;
  return p;
}

bool Agrees(double a, double b) { return std::fabs(a - b) <= kAgreement * std::fabs(b); }

std::string Percent(double fraction) { return FormatSig(100 * fraction, 3) + "%"; }

std::string ErrorLine(const DeviceCalibration::Error& e) {
  return fmt::format("rms {}, median |e| {}, max |e| {} ({} cases)", Percent(e.rms),
                     Percent(e.median_abs), Percent(e.max_abs), e.cases);
}

}  // namespace

void ValidateCalibrationOptions(const CalibrationOptions& o) {
  if (o.parameters.empty()) {
    throw UsageError("CalibrationOptions.parameters is empty: fit at least one parameter");
  }
  std::set<CalibrationParameter> seen;
  for (CalibrationParameter p : o.parameters) {
    if (!seen.insert(p).second) {
      throw UsageError(fmt::format("CalibrationOptions.parameters: '{}' is listed twice",
                                   CalibrationParameterName(p)));
    }
  }
  if (!(o.min_scale > 0 && o.min_scale < 1)) {
    throw UsageError(
        fmt::format("CalibrationOptions.min_scale = {}: must be in (0, 1)", o.min_scale));
  }
  if (o.max_iterations < 1) {
    throw UsageError(
        fmt::format("CalibrationOptions.max_iterations = {}: must be >= 1", o.max_iterations));
  }
  if (!(o.confidence > 0 && o.confidence < 1)) {
    throw UsageError(
        fmt::format("CalibrationOptions.confidence = {}: must be in (0, 1)", o.confidence));
  }
}

DeviceCalibration::Error SummarizeErrors(const std::vector<double>& errors) {
  DeviceCalibration::Error e;
  e.cases = static_cast<int>(errors.size());
  if (errors.empty()) return e;
  std::vector<double> abs_errors;
  double sum_squares = 0;
  for (double x : errors) {
    sum_squares += x * x;
    abs_errors.push_back(std::fabs(x));
  }
  std::sort(abs_errors.begin(), abs_errors.end());
  const size_t n = abs_errors.size();
  e.rms = std::sqrt(sum_squares / static_cast<double>(n));
  e.median_abs = n % 2 == 1 ? abs_errors[n / 2] : 0.5 * (abs_errors[n / 2 - 1] + abs_errors[n / 2]);
  e.max_abs = abs_errors.back();
  return e;
}

CalibrationResult CalibrateDevice(const Device& device, const std::vector<MeasuredCase>& cases,
                                  const CalibrationOptions& options) {
  ValidateCalibrationOptions(options);
  std::array<bool, kParams> free{};
  for (CalibrationParameter p : options.parameters) free[static_cast<size_t>(p)] = true;
  const int n_free = static_cast<int>(options.parameters.size());

  CalibrationResult result;
  result.device_before = fmt::format("{} ({})", device.name, device.origin);
  result.confidence = options.confidence;
  for (int j = 0; j < kParams; ++j) {
    if (!free[j]) result.fixed.push_back(kInfo[j].name);
  }
  for (const MeasuredCase& c : cases) {
    if (std::find(result.networks.begin(), result.networks.end(), c.network) ==
        result.networks.end()) {
      result.networks.push_back(c.network);
    }
  }
  std::vector<std::string> free_names;
  for (int j = 0; j < kParams; ++j) {
    if (free[j]) free_names.push_back(kInfo[j].short_name);
  }
  if (static_cast<int>(cases.size()) < n_free) {
    throw DataError(fmt::format(
        "calibrating {}: {} case(s) for {} parameters ({}): need at least as many cases as "
        "fitted parameters; fit fewer (--params), the others keep the device's values",
        device.name, cases.size(), n_free, fmt::join(free_names, ", ")));
  }
  if (options.leave_one_network_out && result.networks.size() < 2) {
    throw DataError(fmt::format(
        "calibrating {}: the cases are of {} network(s) ({}): leave-one-network-out "
        "cross-validation needs cases of at least 2 networks, or the reported accuracy would "
        "be in-sample only",
        device.name, result.networks.size(), fmt::join(result.networks, ", ")));
  }

  // One ModelStep per case on the device as given: the terms of the fit.
  std::map<std::string, Network> networks;
  std::vector<CaseTerms> terms;
  terms.reserve(cases.size());
  const Values start = {1, 1, device.kernel_launch_s / kInfo[2].internal_unit,
                        device.step_host_s / kInfo[3].internal_unit, 1};
  for (const MeasuredCase& c : cases) {
    const ModeledStep step = ModelCase(CaseNetwork(networks, c), device, c, options.optimizer);
    terms.push_back(Terms(step, c, CaseModelOptions(c, options.optimizer), device, free));
    FITSPEED_CHECK(Agrees(StepTime(terms.back(), start), step.step_time_s),
                   "the decomposed step time reproduces ModelStep");
    CaseFit fit;
    fit.measured = c;
    fit.key = CaseKey(c);
    fit.measured_step_s = terms.back().measured_step_s;
    fit.before_step_s = step.step_time_s;
    fit.loo_step_s = kNaN;
    fit.fits_memory = step.fits;
    result.cases.push_back(std::move(fit));
  }

  Bounds bounds;
  bounds.lower = {options.min_scale, options.min_scale, 0, 0, options.min_scale};
  bounds.upper = {1 / MaxComputeEfficiency(device), 1 / MaxMemoryEfficiency(device), kInf, kInf,
                  1 / MaxEfficiency(device.TensorEfficiency())};
  // ModelStep of `which` cases on `base` with the parameters `x`.
  auto predict = [&](const Values& x, const std::vector<size_t>& which) {
    const Device d = Apply(device, x, free);
    std::vector<double> step_s;
    for (size_t i : which) {
      const MeasuredCase& c = cases[i];
      step_s.push_back(
          ModelCase(networks.at(CaseNetworkKey(c)), d, c, options.optimizer).step_time_s);
      FITSPEED_CHECK(Agrees(StepTime(terms[i], x), step_s.back()),
                     "the decomposed step time reproduces ModelStep on the calibrated device");
    }
    return step_s;
  };

  // The calibration on every case.
  std::vector<const CaseTerms*> all;
  std::vector<size_t> all_index;
  for (size_t i = 0; i < terms.size(); ++i) {
    all.push_back(&terms[i]);
    all_index.push_back(i);
  }
  const Solution solution = Solve(all, start, free, bounds, options.max_iterations);
  result.converged = solution.converged;
  result.iterations = solution.iterations;
  result.solver_message = solution.message;
  result.dof = static_cast<int>(cases.size()) - n_free;
  result.rss = solution.residuals.squaredNorm();
  const std::vector<double> after = predict(solution.x, all_index);
  for (size_t i = 0; i < cases.size(); ++i) result.cases[i].after_step_s = after[i];

  // Covariance s^2 (J^T J)^-1 with s^2 = RSS/dof (as fit/fit.cc), from J P = Q R.
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(solution.jacobian);
  Eigen::MatrixXd covariance = Eigen::MatrixXd::Constant(n_free, n_free, kNaN);
  Eigen::MatrixXd correlation = covariance;
  if (qr.rank() == n_free) {
    const Eigen::MatrixXd r_inverse = qr.matrixR()
                                          .topLeftCorner(n_free, n_free)
                                          .triangularView<Eigen::Upper>()
                                          .solve(Eigen::MatrixXd::Identity(n_free, n_free));
    const Eigen::MatrixXd unscaled = qr.colsPermutation() * (r_inverse * r_inverse.transpose()) *
                                     qr.colsPermutation().transpose();
    const Eigen::VectorXd inv_sd = unscaled.diagonal().cwiseSqrt().cwiseInverse();
    correlation = inv_sd.asDiagonal() * unscaled * inv_sd.asDiagonal();
    if (result.dof > 0) covariance = unscaled * (result.rss / result.dof);
  } else {
    result.warnings.push_back(
        "the Jacobian is rank deficient at the solution: the cases do not determine the fitted "
        "parameters separately (fit fewer with --params, or add networks and batch sizes)");
  }
  const double t_quantile = StudentTQuantile(0.5 * (1 + options.confidence), result.dof);
  int k = 0;
  for (int j = 0; j < kParams; ++j) {
    if (!free[j]) continue;
    CalibratedParameter p = FittedParameter(j, start, solution.x, bounds);
    p.std_error = std::sqrt(covariance(k, k)) * kInfo[j].internal_unit;
    p.ci_low = p.value - t_quantile * p.std_error;
    p.ci_high = p.value + t_quantile * p.std_error;
    if (p.at_bound()) {
      result.warnings.push_back(
          fmt::format("{} = {} is at its bound [{}, {}]: the interval assumes an interior optimum",
                      p.name, FormatSig(p.value), FormatSig(p.lower), FormatSig(p.upper)));
    }
    result.parameters.push_back(std::move(p));
    ++k;
  }
  for (int a = 0; a < n_free; ++a) {
    for (int b = a + 1; b < n_free; ++b) {
      if (std::fabs(correlation(a, b)) > kMaxAbsCorrelation) {
        result.warnings.push_back(fmt::format(
            "{} and {} are strongly correlated (corr = {:+.4f}): the cases hardly separate them",
            result.parameters[a].name, result.parameters[b].name, correlation(a, b)));
      }
    }
  }
  if (result.dof == 0) {
    result.warnings.push_back(fmt::format(
        "{} cases for {} parameters leave no degrees of freedom: no uncertainty can be given",
        cases.size(), n_free));
  }
  if (!result.converged) {
    result.warnings.push_back(fmt::format("the fit did not converge: {}", solution.message));
  }
  int out_of_memory = 0;
  for (const CaseFit& c : result.cases) out_of_memory += c.fits_memory ? 0 : 1;
  if (out_of_memory > 0) {
    result.warnings.push_back(fmt::format(
        "{} measured case(s) do not fit the device's memory in the model: its memory estimate "
        "is too high for them",
        out_of_memory));
  }

  // Leave one network out: fit the others' cases, predict this network's.
  if (options.leave_one_network_out) {
    std::vector<double> loo_errors;
    for (const std::string& network : result.networks) {
      HeldOutNetwork fold;
      fold.network = network;
      std::vector<const CaseTerms*> training;
      std::vector<size_t> held;
      for (size_t i = 0; i < cases.size(); ++i) {
        if (cases[i].network == network) {
          held.push_back(i);
        } else {
          training.push_back(&terms[i]);
        }
      }
      fold.cases = static_cast<int>(held.size());
      fold.training_cases = static_cast<int>(training.size());
      if (fold.training_cases < n_free) {
        fold.problem = fmt::format("{} case(s) of the other networks for {} parameters",
                                   fold.training_cases, n_free);
        result.warnings.push_back(
            fmt::format("leaving out {}: no fit ({})", network, fold.problem));
        result.held_out.push_back(std::move(fold));
        continue;
      }
      const Solution s = Solve(training, start, free, bounds, options.max_iterations);
      if (!s.converged) {
        result.warnings.push_back(
            fmt::format("leaving out {}: the fit did not converge: {}", network, s.message));
      }
      fold.computed = true;
      for (int j = 0; j < kParams; ++j) {
        if (free[j]) fold.values.push_back(s.x[j] * kInfo[j].internal_unit);
      }
      const std::vector<double> predicted = predict(s.x, held);
      std::vector<double> errors;
      for (size_t h = 0; h < held.size(); ++h) {
        CaseFit& c = result.cases[held[h]];
        c.loo_step_s = predicted[h];
        errors.push_back(c.error_loo());
        loo_errors.push_back(c.error_loo());
      }
      fold.error = SummarizeErrors(errors);
      result.held_out.push_back(std::move(fold));
    }
    if (!loo_errors.empty()) result.loo = SummarizeErrors(loo_errors);
  }

  std::vector<double> before_errors, after_errors;
  for (const CaseFit& c : result.cases) {
    before_errors.push_back(c.error_before());
    after_errors.push_back(c.error_after());
  }
  result.before = SummarizeErrors(before_errors);
  result.after = SummarizeErrors(after_errors);

  // The calibrated device, with its fitted fields' sources rewritten.
  Device& d = result.device;
  d = Apply(device, solution.x, free);
  d.origin = "calibrated:" + device.origin;
  const std::string on =
      fmt::format("fitspeed calibrate on {} case(s) of {} network(s) ({})", cases.size(),
                  result.networks.size(), fmt::join(result.networks, ", "));

  k = 0;
  for (int j = 0; j < kParams; ++j) {
    if (!free[j]) continue;
    const CalibratedParameter& p = result.parameters[static_cast<size_t>(k++)];
    const auto it = device.sources.find(kInfo[j].field);
    const bool scale = kInfo[j].unit[0] == '\0';
    std::string before = it == device.sources.end() ? "not recorded" : it->second;
    if (j == 4 && device.tensor_efficiency.points.empty()) {
      before = "the compute curve (the device had no tensor curve)";
    }
    const std::string what = scale ? fmt::format("every point x {}", FormatSig(p.value, 6))
                                   : fmt::format("{} s", FormatSig(p.value, 6));
    d.sources[kInfo[j].field] =
        fmt::format("calibrated: {} ({}, {}% CI {} to {}); before: {}", what, on,
                    FormatSig(100 * options.confidence), FormatSig(p.ci_low, 4),
                    FormatSig(p.ci_high, 4), before);
    d.bases[kInfo[j].field] = "fitted";
    MarkScaledCurves(d, device, static_cast<size_t>(j));
  }
  d.calibrated_on.clear();
  for (const CaseFit& c : result.cases) {
    if (std::find(d.calibrated_on.begin(), d.calibrated_on.end(), c.key) == d.calibrated_on.end()) {
      d.calibrated_on.push_back(c.key);
    }
  }
  DeviceCalibration& cal = d.calibration;
  cal = DeviceCalibration{};
  std::vector<std::string> fitted;
  for (const CalibratedParameter& p : result.parameters) fitted.push_back(p.name);
  cal.method = fmt::format(
      "fitspeed calibrate: bounded least squares (Ceres) of log(modeled/measured step time) "
      "over {} case(s) of {} network(s); fitted {}; kept {}; covariance s^2 (J^T J)^-1, "
      "s^2 = RSS/dof; errors are predicted/measured throughput - 1",
      cases.size(), result.networks.size(), fmt::join(fitted, ", "),
      result.fixed.empty() ? std::string("none")
                           : fmt::format("{}", fmt::join(result.fixed, ", ")));
  cal.confidence = options.confidence;
  for (const CalibratedParameter& p : result.parameters) {
    cal.parameters.push_back({p.name, p.value, p.std_error, p.ci_low, p.ci_high});
  }
  cal.error_before = result.before;
  cal.error_after = result.after;
  cal.error_loo = result.loo;
  return result;
}

SharedCalibration CalibrateShared(const std::vector<Device>& devices,
                                  const std::vector<MeasuredCase>& cases,
                                  const CalibrationOptions& options) {
  ValidateCalibrationOptions(options);
  if (devices.empty()) throw UsageError("CalibrateShared: no devices");
  std::array<bool, kParams> free{};
  for (CalibrationParameter p : options.parameters) free[static_cast<size_t>(p)] = true;
  const int n_free = static_cast<int>(options.parameters.size());
  if (static_cast<int>(cases.size()) < n_free) {
    throw DataError(
        fmt::format("shared calibration: {} case(s) for {} parameters: need at least "
                    "as many cases as fitted parameters",
                    cases.size(), n_free));
  }
  // Overheads start at the mean of the devices' values.
  Values start = {1, 1, 0, 0, 1};
  for (const Device& d : devices) {
    start[2] += d.kernel_launch_s / kInfo[2].internal_unit / static_cast<double>(devices.size());
    start[3] += d.step_host_s / kInfo[3].internal_unit / static_cast<double>(devices.size());
  }
  Bounds bounds;
  bounds.lower = {options.min_scale, options.min_scale, 0, 0, options.min_scale};
  bounds.upper = {kInf, kInf, kInf, kInf, kInf};
  for (const Device& d : devices) {
    bounds.upper[0] = std::min(bounds.upper[0], 1 / MaxComputeEfficiency(d));
    bounds.upper[1] = std::min(bounds.upper[1], 1 / MaxMemoryEfficiency(d));
    bounds.upper[4] = std::min(bounds.upper[4], 1 / MaxEfficiency(d.TensorEfficiency()));
  }
  std::map<std::string, Network> networks;
  std::vector<CaseTerms> terms;
  std::vector<const Device*> case_devices;
  for (const MeasuredCase& c : cases) {
    const auto device = std::find_if(devices.begin(), devices.end(),
                                     [&c](const Device& d) { return d.name == c.device; });
    if (device == devices.end()) {
      throw DataError(c.source, c.line, "device",
                      fmt::format("'{}' is not among the devices calibrated", c.device));
    }
    const ModeledStep step = ModelCase(CaseNetwork(networks, c), *device, c, options.optimizer);
    terms.push_back(Terms(step, c, CaseModelOptions(c, options.optimizer), *device, free));
    case_devices.push_back(&*device);
  }
  std::vector<const CaseTerms*> all;
  for (const CaseTerms& t : terms) all.push_back(&t);
  const Solution solution = Solve(all, start, free, bounds, options.max_iterations);
  SharedCalibration result;
  result.converged = solution.converged;
  result.iterations = solution.iterations;
  result.solver_message = solution.message;
  for (int j = 0; j < kParams; ++j) {
    // Not estimated: the shared fit serves predictions (std_error and CI NaN).
    if (free[j]) result.parameters.push_back(FittedParameter(j, start, solution.x, bounds));
  }
  std::vector<double> errors;
  for (size_t i = 0; i < cases.size(); ++i) {
    const MeasuredCase& c = cases[i];
    const Device calibrated = ApplyCalibration(*case_devices[i], result.parameters);
    const double step_s =
        ModelCase(networks.at(CaseNetworkKey(c)), calibrated, c, options.optimizer).step_time_s;
    FITSPEED_CHECK(Agrees(StepTime(terms[i], solution.x), step_s),
                   "the decomposed step time reproduces ModelStep on the calibrated device");
    errors.push_back(terms[i].measured_step_s / step_s - 1);
  }
  result.after = SummarizeErrors(errors);
  return result;
}

bool OnTensorUnits(const MeasuredCase& c, const Device& device) {
  return MatrixOnTensorUnits(device, c.precision);
}

std::vector<CalibrationParameter> ScalesDetermined(const std::vector<MeasuredCase>& cases,
                                                   const std::vector<const Device*>& devices) {
  FITSPEED_CHECK(cases.size() == devices.size(), "one device per case");
  bool off_tensor = false;
  bool on_tensor = false;
  for (size_t i = 0; i < cases.size(); ++i) {
    (OnTensorUnits(cases[i], *devices[i]) ? on_tensor : off_tensor) = true;
  }
  std::vector<CalibrationParameter> scales;
  if (off_tensor) scales.push_back(CalibrationParameter::kComputeScale);
  if (on_tensor) scales.push_back(CalibrationParameter::kTensorScale);
  return scales;  // kComputeScale < kTensorScale: enum order
}

std::string CalibrationResult::BriefReport() const {
  std::vector<std::string> values;
  for (const CalibratedParameter& p : parameters) {
    values.push_back(
        fmt::format("{} {} +/- {}", p.name, FormatSig(p.value), FormatSig(p.std_error, 2)));
  }
  return fmt::format(
      "{} calibrated on {} cases of {} networks: {}; rms error {} -> {}{}{}", device.name,
      cases.size(), networks.size(), fmt::join(values, ", "), Percent(before.rms),
      Percent(after.rms),
      loo ? fmt::format(", out-of-sample (leave one network out) {}", Percent(loo->rms))
          : std::string(),
      converged ? "" : " (did not converge)");
}

std::string CalibrationResult::FullReport() const {
  std::string out = fmt::format(
      "calibration of {} ({} cases, {} networks, {} parameters, dof {}; {} after {} "
      "iterations)\n",
      device_before, cases.size(), networks.size(), parameters.size(), dof,
      converged ? "converged" : "DID NOT CONVERGE", iterations);
  TextTable params({"parameter", "before", "value", "std_error",
                    fmt::format("ci{}_low", FormatSig(100 * confidence)),
                    fmt::format("ci{}_high", FormatSig(100 * confidence)), "unit", "bounds"});
  for (const CalibratedParameter& p : parameters) {
    params.AddRow({p.name, FormatSig(p.initial), FormatSig(p.value, 5), FormatSig(p.std_error, 3),
                   FormatSig(p.ci_low, 5), FormatSig(p.ci_high, 5), p.unit.empty() ? "-" : p.unit,
                   fmt::format("[{}, {}]", FormatSig(p.lower), FormatSig(p.upper))});
  }
  out += params.Render();
  if (!fixed.empty())
    out += fmt::format("kept at the device's values: {}\n", fmt::join(fixed, ", "));
  out += fmt::format("error before: {}\n", ErrorLine(before));
  out += fmt::format("error after:  {} (in-sample)\n", ErrorLine(after));
  if (loo) out += fmt::format("out-of-sample (leave one network out): {}\n", ErrorLine(*loo));
  for (const std::string& w : warnings) out += fmt::format("warning: {}\n", w);

  TextTable table({"case", "measured_sps", "before_sps", "after_sps", "loo_sps", "err_before",
                   "err_after", "err_loo"});
  for (const CaseFit& c : cases) {
    const double batch = static_cast<double>(c.measured.batch);
    const bool loo_done = std::isfinite(c.loo_step_s);
    table.AddRow({c.key, FormatSig(c.measured.throughput_sps), FormatSig(batch / c.before_step_s),
                  FormatSig(batch / c.after_step_s),
                  loo_done ? FormatSig(batch / c.loo_step_s) : "-", Percent(c.error_before()),
                  Percent(c.error_after()), loo_done ? Percent(c.error_loo()) : "-"});
  }
  out += "\n" + table.Render();
  if (!held_out.empty()) {
    std::vector<std::string> header = {"held_out", "cases", "training_cases"};
    for (const CalibratedParameter& p : parameters) header.push_back(p.name);
    for (const char* h : {"rms", "median_abs", "max_abs"}) header.push_back(h);
    TextTable folds(header);
    for (const HeldOutNetwork& f : held_out) {
      std::vector<std::string> row = {f.network, std::to_string(f.cases),
                                      std::to_string(f.training_cases)};
      for (size_t j = 0; j < parameters.size(); ++j) {
        row.push_back(f.computed ? FormatSig(f.values[j], 5) : "-");
      }
      for (double e : {f.error.rms, f.error.median_abs, f.error.max_abs}) {
        row.push_back(f.computed ? Percent(e) : "-");
      }
      folds.AddRow(row);
    }
    out += "\n" + folds.Render();
  }
  return out;
}

}  // namespace fitspeed

// Data-parallel scaling (see scaling.h and docs/design.md, "Multi-device").
#include "fitspeed/project/scaling.h"

#include <ceres/ceres.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "core/finite.h"
#include "core/table.h"
#include "fit/solver_options.h"
#include "fitspeed/core/error.h"
#include "project/validation_pass.h"

namespace fitspeed {

namespace {

// The value of a scalar or of a ceres::Jet, for branching.
double ValueOf(double x) { return x; }
template <typename T, int N>
double ValueOf(const ceres::Jet<T, N>& x) {
  return x.a;
}

// (c^g + n^g)^(1/g) written around the larger term so large g cannot overflow.
template <typename T>
T Overlap(const T& compute, const T& comm, const T& gamma) {
  using std::pow;
  if (ValueOf(comm) <= 0) return compute;
  if (ValueOf(compute) >= ValueOf(comm)) {
    return compute * pow(T(1.0) + pow(comm / compute, gamma), T(1.0) / gamma);
  }
  return comm * pow(T(1.0) + pow(compute / comm, gamma), T(1.0) / gamma);
}

// Residual predicted/observed - 1 of one multi-device step under the overlap
// model; parameters log(S/B), log(a), g.
struct OverlapResidual {
  double compute_s;  // b/v0 + t of the single-device law
  double bandwidth_factor;
  double latency_factor;
  double observed_s;
  double fixed_comm_s;  // >= 0: the communication time, the two log parameters unused
  template <typename T>
  bool operator()(const T* log_bw_term, const T* log_latency, const T* gamma, T* residual) const {
    using std::exp;
    const T comm = fixed_comm_s >= 0 ? T(fixed_comm_s)
                                     : T(bandwidth_factor) * exp(log_bw_term[0]) +
                                           T(latency_factor) * exp(log_latency[0]);
    residual[0] = Overlap(T(compute_s), comm, gamma[0]) / T(observed_s) - T(1.0);
    return true;
  }
};

// Residual (T - compute - exposed)/observed of a measured exposed
// communication time; parameters as OverlapResidual.
struct ExposedResidual {
  OverlapResidual step;
  double exposed_s;
  template <typename T>
  bool operator()(const T* log_bw_term, const T* log_latency, const T* gamma, T* residual) const {
    T relative_step;  // predicted/observed - 1
    step(log_bw_term, log_latency, gamma, &relative_step);
    const T predicted = (relative_step + T(1.0)) * T(step.observed_s);
    residual[0] = (predicted - T(step.compute_s) - T(exposed_s)) / T(step.observed_s);
    return true;
  }
};

}  // namespace

double OverlapTime(double compute_s, double comm_s, double gamma) {
  if (!NonNegativeFinite(compute_s) || !NonNegativeFinite(comm_s)) {
    throw UsageError(fmt::format("compute {} s and communication {} s must be >= 0 and finite",
                                 compute_s, comm_s));
  }
  if (std::isnan(gamma) || gamma < 1) {
    throw UsageError(fmt::format("overlap exponent g must be >= 1, got {}", gamma));
  }
  if (std::isinf(gamma)) return std::max(compute_s, comm_s);
  return Overlap(compute_s, comm_s, gamma);
}

double RingCommFit::Predict(int devices) const {
  return RingBandwidthFactor(devices) * bandwidth_term_s + RingLatencyFactor(devices) * latency_s;
}

Link RingCommFit::AsLink(double gradient_bytes) const {
  return {bandwidth_term_s > 0 ? gradient_bytes / bandwidth_term_s
                               : std::numeric_limits<double>::infinity(),
          latency_s};
}

RingCommFit FitRingCommTimes(const std::vector<CommObservation>& observations) {
  std::vector<std::array<double, 3>> points;  // bandwidth factor, latency factor, t_comm
  for (const CommObservation& o : observations) {
    if (o.devices < 1 || !std::isfinite(o.comm_s)) {
      throw DataError(
          fmt::format("communication time {} s at {} devices is unusable", o.comm_s, o.devices));
    }
    if (o.devices > 1)
      points.push_back({RingBandwidthFactor(o.devices), RingLatencyFactor(o.devices), o.comm_s});
  }
  if (points.empty()) {
    throw DataError("fitting a communication time needs a measurement on more than one device");
  }
  // Non-negative least squares in two unknowns: the best of the feasible
  // solutions on each active set (both, bandwidth only, latency only, none).
  double sxx = 0, sxy = 0, syy = 0, sxd = 0, syd = 0;
  for (const auto& p : points) {
    sxx += p[0] * p[0];
    sxy += p[0] * p[1];
    syy += p[1] * p[1];
    sxd += p[0] * p[2];
    syd += p[1] * p[2];
  }
  std::vector<std::array<double, 2>> candidates = {{0, 0}};
  candidates.push_back({std::max(0.0, sxd / sxx), 0});
  candidates.push_back({0, std::max(0.0, syd / syy)});
  const double det = sxx * syy - sxy * sxy;
  if (std::fabs(det) > 1e-12 * sxx * syy) {
    const double x = (sxd * syy - syd * sxy) / det, y = (syd * sxx - sxd * sxy) / det;
    if (x >= 0 && y >= 0) candidates.push_back({x, y});
  }
  auto rss = [&](double x, double y) {
    double sum = 0;
    for (const auto& p : points) sum += std::pow(p[0] * x + p[1] * y - p[2], 2);
    return sum;
  };
  RingCommFit best;
  double best_rss = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates) {
    const double r = rss(c[0], c[1]);
    if (r < best_rss) {
      best_rss = r;
      best.bandwidth_term_s = c[0];
      best.latency_s = c[1];
    }
  }
  best.points = static_cast<int>(points.size());
  best.rms_residual_s = std::sqrt(best_rss / points.size());
  return best;
}

RingCommFit FitRingToFixedTimes(const DeviceScaling& scaling) {
  std::optional<double> t1;
  for (const DeviceScalingRow& row : scaling.rows) {
    if (!std::isfinite(row.t) || row.devices < 1) {
      throw DataError(fmt::format("device scaling of '{}': t = {} at {} devices is unusable",
                                  scaling.label, row.t, row.devices));
    }
    if (row.devices == 1) t1 = row.t;
  }
  if (!t1) {
    throw DataError(
        fmt::format("device scaling of '{}' has no single-device fit to measure "
                    "communication against",
                    scaling.label));
  }
  std::vector<CommObservation> observations;
  for (const DeviceScalingRow& row : scaling.rows) {
    if (row.devices > 1) observations.push_back({row.devices, row.t - *t1});
  }
  if (observations.empty()) {
    throw DataError(
        fmt::format("device scaling of '{}' has no fit on more than one device", scaling.label));
  }
  return FitRingCommTimes(observations);
}

void ValidateDataParallelModel(const DataParallelModel& model) {
  ValidateSpeedLaw(model.single_device, "single-device law");
  if (!NonNegativeFinite(model.gradient_bytes)) {
    throw UsageError(
        fmt::format("gradient bytes must be >= 0 and finite, got {}", model.gradient_bytes));
  }
  ValidateCommModel(model.comm);
  if (std::isnan(model.overlap_gamma) || model.overlap_gamma < 1) {
    throw UsageError(fmt::format("overlap exponent g must be >= 1, got {}", model.overlap_gamma));
  }
}

double CommTime(const DataParallelModel& model, int devices) {
  return AllReduceTime(model.gradient_bytes, devices, model.comm);
}

double StepTime(const DataParallelModel& model, int devices, double per_device_batch) {
  ValidateDataParallelModel(model);
  if (!PositiveFinite(per_device_batch)) {
    throw UsageError(fmt::format("per-device batch must be > 0, got {}", per_device_batch));
  }
  const double compute = model.single_device.StepTime(per_device_batch);
  return OverlapTime(compute, CommTime(model, devices), model.overlap_gamma);
}

std::string ScalingModeName(ScalingMode mode) {
  return mode == ScalingMode::kWeak ? "weak" : "strong";
}

std::vector<ScalingRow> Scaling(const DataParallelModel& model, ScalingMode mode, double batch,
                                const std::vector<int>& devices) {
  ValidateDataParallelModel(model);
  if (!PositiveFinite(batch)) throw UsageError(fmt::format("batch must be > 0, got {}", batch));
  // The one-device reference runs `batch` on one device in both modes.
  const double reference_sps = batch / StepTime(model, 1, batch);
  std::vector<ScalingRow> rows;
  for (int n : devices) {
    if (n < 1) throw UsageError(fmt::format("device counts must be >= 1, got {}", n));
    ScalingRow row;
    row.mode = mode;
    row.devices = n;
    row.per_device_batch = mode == ScalingMode::kWeak ? batch : batch / n;
    row.global_batch = mode == ScalingMode::kWeak ? batch * n : batch;
    row.comm_s = CommTime(model, n);
    row.step_time_s = StepTime(model, n, row.per_device_batch);
    row.throughput_sps = row.global_batch / row.step_time_s;
    row.speedup = row.throughput_sps / reference_sps;
    row.efficiency = row.speedup / n;
    rows.push_back(row);
  }
  return rows;
}

UsefulDevices LargestUsefulDevices(const DataParallelModel& model, double global_batch,
                                   int max_devices, double min_efficiency) {
  ValidateDataParallelModel(model);
  if (max_devices < 1) {
    throw UsageError(fmt::format("the largest device count must be >= 1, got {}", max_devices));
  }
  if (!(std::isfinite(global_batch) && global_batch >= 1)) {
    throw UsageError(fmt::format("global batch must be >= 1, got {}", global_batch));
  }
  if (!(min_efficiency > 0 && min_efficiency <= 1)) {
    throw UsageError(fmt::format("minimum efficiency must be in (0, 1], got {}", min_efficiency));
  }
  const double one_sps = global_batch / StepTime(model, 1, global_batch);
  UsefulDevices useful;
  useful.fastest_throughput_sps = one_sps;
  useful.fastest_efficiency = 1;
  const int last = static_cast<int>(std::min<double>(max_devices, std::floor(global_batch)));
  for (int n = 2; n <= last; ++n) {
    const double sps = global_batch / StepTime(model, n, global_batch / n);
    const double efficiency = sps / (n * one_sps);
    if (sps > useful.fastest_throughput_sps * (1 + 1e-12)) {
      useful.fastest_devices = n;
      useful.fastest_throughput_sps = sps;
      useful.fastest_efficiency = efficiency;
    }
    if (efficiency >= min_efficiency) useful.efficient_devices = n;
  }
  return useful;
}

Link OverlapFit::AsLink(double gradient_bytes) const {
  return {bandwidth_term_s > 0 ? gradient_bytes / bandwidth_term_s
                               : std::numeric_limits<double>::infinity(),
          latency_s};
}

OverlapFit FitOverlapModel(const SpeedLaw& single_device, const std::vector<MultiDeviceStep>& steps,
                           const std::optional<RingCommFit>& comm) {
  ValidateSpeedLaw(single_device, "single-device law");
  std::vector<OverlapResidual> residuals;
  std::vector<ExposedResidual> exposed_residuals;
  for (const MultiDeviceStep& s : steps) {
    if (s.devices < 1 || !PositiveFinite(s.per_device_batch) || !PositiveFinite(s.step_time_s) ||
        (s.exposed_comm_s && !NonNegativeFinite(*s.exposed_comm_s))) {
      throw DataError(
          fmt::format("multi-device step ({} devices, batch {}, {} s) is not "
                      "positive and finite",
                      s.devices, s.per_device_batch, s.step_time_s));
    }
    if (s.devices == 1) continue;
    residuals.push_back({single_device.StepTime(s.per_device_batch), RingBandwidthFactor(s.devices),
                         RingLatencyFactor(s.devices), s.step_time_s,
                         comm ? comm->Predict(s.devices) : -1.0});
    if (s.exposed_comm_s) exposed_residuals.push_back({residuals.back(), *s.exposed_comm_s});
  }
  const size_t needed = comm ? 1 : 3;
  if (residuals.size() < needed) {
    throw DataError(
        fmt::format("calibrating the overlap model needs >= {} measurement(s) on "
                    "more than one device, got {}",
                    needed, residuals.size()));
  }
  // Start S/B at the median exposed time per bandwidth factor.
  std::vector<double> exposed;
  for (const OverlapResidual& r : residuals) {
    exposed.push_back(std::max(r.observed_s - r.compute_s, 1e-4 * r.observed_s) /
                      r.bandwidth_factor);
  }
  std::nth_element(exposed.begin(), exposed.begin() + exposed.size() / 2, exposed.end());
  const double start_bw_term = exposed[exposed.size() / 2];

  constexpr double kMinLatency = 1e-9, kMaxLatency = 1.0, kMinBwTerm = 1e-9, kMaxBwTerm = 1e3;
  constexpr double kMaxGamma = 50;
  OverlapFit best;
  double best_cost = std::numeric_limits<double>::infinity();
  std::array<double, 3> best_params = {0, 0, 1};  // log(S/B), log(a), g
  for (double start_gamma : {1.0, 2.0, 4.0, 8.0}) {
    double log_bw = std::log(start_bw_term), log_latency = std::log(1e-5), gamma = start_gamma;
    ceres::Problem problem;
    for (const OverlapResidual& r : residuals) {
      problem.AddResidualBlock(
          new ceres::AutoDiffCostFunction<OverlapResidual, 1, 1, 1, 1>(new OverlapResidual(r)),
          nullptr, &log_bw, &log_latency, &gamma);
    }
    for (const ExposedResidual& r : exposed_residuals) {
      problem.AddResidualBlock(
          new ceres::AutoDiffCostFunction<ExposedResidual, 1, 1, 1, 1>(new ExposedResidual(r)),
          nullptr, &log_bw, &log_latency, &gamma);
    }
    if (comm) {
      problem.SetParameterBlockConstant(&log_bw);
      problem.SetParameterBlockConstant(&log_latency);
    } else {
      problem.SetParameterLowerBound(&log_bw, 0, std::log(kMinBwTerm));
      problem.SetParameterUpperBound(&log_bw, 0, std::log(kMaxBwTerm));
      problem.SetParameterLowerBound(&log_latency, 0, std::log(kMinLatency));
      problem.SetParameterUpperBound(&log_latency, 0, std::log(kMaxLatency));
    }
    problem.SetParameterLowerBound(&gamma, 0, 1.0);
    problem.SetParameterUpperBound(&gamma, 0, kMaxGamma);
    ceres::Solver::Options options = QuietSolverOptions({500, 1e-14, 1e-12});
    // This fit has always solved with Ceres's default linear solver (sparse
    // normal Cholesky where Ceres has SuiteSparse); kept for identical numbers.
    options.linear_solver_type = ceres::Solver::Options().linear_solver_type;
    ceres::Solver::Summary summary;
    ceres::Solve(options, &problem, &summary);
    if (!summary.IsSolutionUsable() || !(summary.final_cost < best_cost)) continue;
    best_cost = summary.final_cost;
    best.bandwidth_term_s = comm ? comm->bandwidth_term_s : std::exp(log_bw);
    best.latency_s = comm ? comm->latency_s : std::exp(log_latency);
    best.gamma = gamma;
    best.converged = summary.termination_type == ceres::CONVERGENCE;
    best_params = {log_bw, log_latency, gamma};
  }
  best.points = static_cast<int>(residuals.size());
  best.exposed_points = static_cast<int>(exposed_residuals.size());
  if (!std::isfinite(best_cost)) {
    best.rel_rmse = best.exposed_rmse = std::numeric_limits<double>::quiet_NaN();
    return best;
  }
  auto rms = [&](const auto& functors) {
    double sum = 0;
    for (const auto& f : functors) {
      double r = 0;
      f(&best_params[0], &best_params[1], &best_params[2], &r);
      sum += r * r;
    }
    return functors.empty() ? 0.0 : std::sqrt(sum / functors.size());
  };
  best.rel_rmse = rms(residuals);
  best.exposed_rmse = rms(exposed_residuals);
  return best;
}

EpochModel EpochModelFromScaling(const DataParallelModel& model, int devices,
                                 double per_device_batch, const Workload& workload,
                                 const std::string& label) {
  ValidateDataParallelModel(model);
  ValidateWorkload(workload);
  if (devices < 1) throw UsageError(fmt::format("devices must be >= 1, got {}", devices));
  if (!PositiveFinite(per_device_batch)) {
    throw UsageError(fmt::format("per-device batch must be > 0, got {}", per_device_batch));
  }
  const SpeedLaw& law = model.single_device;
  const double n_samples = workload.samples_per_epoch;
  const double batch = per_device_batch * devices;
  if (workload.steps_rule == StepsRule::kDropRemainder && batch > n_samples) {
    throw UsageError(
        fmt::format("global batch {} exceeds the {} samples per epoch: dropping "
                    "the remainder leaves no step",
                    batch, n_samples));
  }
  const double comm = CommTime(model, devices);
  const double g = model.overlap_gamma;
  EpochModel m;
  m.label = label;
  m.devices = devices;
  m.batch = batch;
  m.origin = "scaling";
  m.model_errors = law.model_errors;
  m.startup_s = workload.startup_s;
  m.first_epoch_extra_s = workload.first_epoch_extra_s;
  m.steps_per_epoch = StepsPerEpoch(n_samples, batch, workload.steps_rule);
  m.samples_used = SamplesUsedPerEpoch(n_samples, batch, workload.steps_rule);

  Eigen::Vector2d gradient = Eigen::Vector2d::Zero();
  // Adds `count` steps of per-device batch b: time and d time / d(v0, t).
  auto add_steps = [&](double count, double b) {
    const double compute = law.StepTime(b);
    const double step = OverlapTime(compute, comm, g);
    const double weight =
        std::isinf(g) ? (compute >= comm ? 1.0 : 0.0) : std::pow(compute / step, g - 1);
    m.train_epoch_s += count * step;
    gradient += count * weight * Eigen::Vector2d(-b / (law.v0_sps * law.v0_sps), 1.0);
  };
  const double full_steps = std::floor(m.samples_used / batch + 1e-9);
  const double remainder = m.samples_used - full_steps * batch;
  add_steps(full_steps, per_device_batch);
  if (remainder > 1e-9 * batch) add_steps(1, remainder / devices);
  m.assumptions.push_back(fmt::format(
      "data parallel on n devices: T_n(b) = ((b/v0 + t)^g + t_comm(n)^g)^(1/g) with g = {}, "
      "{} all-reduce of {} bytes",
      FormatSig(g, 4), AllReduceName(model.comm.algorithm), FormatSig(model.gradient_bytes, 6)));

  const ValidationSpec& val = workload.validation;
  double validation_variance = 0;
  if (val.samples > 0) {
    // Forward only on each of n devices, no all-reduce, when derived.
    const ValidationPass pass = ValidationPassOf(val, batch, law, devices);
    m.validation_epoch_s = pass.time_s;
    if (val.law) {
      validation_variance = pass.variance_s2;
      m.assumptions.push_back("validation pass: its own measured forward-only law");
    } else {
      gradient += pass.training_gradient;
      m.assumptions.push_back(fmt::format(
          "validation pass derived, not measured (assumption): forward only on every device, "
          "time per sample {} of training's, fixed time per step {} of t, no all-reduce",
          FormatSig(val.forward_fraction, 3), FormatSig(val.fixed_fraction, 3)));
    }
  }
  m.epoch_s = m.train_epoch_s + m.validation_epoch_s;
  if (law.has_covariance()) {
    m.epoch_stderr_s = std::sqrt(LawVariance(gradient, law.covariance) + validation_variance);
    m.dof = law.dof;
  }
  return m;
}

ScaledProjection ProjectScaling(const std::string& name, const DataParallelModel& model,
                                const std::vector<double>& batches, const Workload& workload,
                                const ScalingRequest& request) {
  ScaledProjection p;
  for (double b : batches) {
    for (const auto& [on, mode] : {std::pair{request.weak, ScalingMode::kWeak},
                                   std::pair{request.strong, ScalingMode::kStrong}}) {
      if (!on) continue;
      for (const ScalingRow& row : Scaling(model, mode, b, request.devices)) {
        p.rows.push_back(row);
        if (row.per_device_batch < 1) continue;
        p.models.push_back(EpochModelFromScaling(
            model, row.devices, row.per_device_batch, workload,
            fmt::format("{} {} n={}", name, ScalingModeName(mode), row.devices)));
      }
    }
    if (request.max_devices > 0) {
      const UsefulDevices u =
          LargestUsefulDevices(model, b, request.max_devices, request.min_efficiency);
      p.notes.push_back(fmt::format(
          "{} at global batch {}: throughput peaks at {} devices ({} samples/s, "
          "efficiency {:.0f}%); efficiency stays >= {:.0f}% up to {} devices",
          name, FormatSig(b, 8), u.fastest_devices, FormatSig(u.fastest_throughput_sps, 5),
          100 * u.fastest_efficiency, 100 * request.min_efficiency, u.efficient_devices));
    }
  }
  p.notes.push_back(DataParallelModelNote(name, model));
  return p;
}

std::string DataParallelModelNote(const std::string& name, const DataParallelModel& m) {
  return fmt::format(
      "{}: {} all-reduce of {} bytes; in-node {} B/s, latency {} s; between nodes {} B/s, "
      "latency {} s; {} devices per node; overlap g = {}",
      name, AllReduceName(m.comm.algorithm), FormatSig(m.gradient_bytes, 8),
      FormatSig(m.comm.intra_node.bandwidth_bytes_per_s, 4),
      FormatSig(m.comm.intra_node.latency_s, 3),
      FormatSig(m.comm.inter_node.bandwidth_bytes_per_s, 4),
      FormatSig(m.comm.inter_node.latency_s, 3),
      m.comm.devices_per_node == 0 ? std::string("all") : std::to_string(m.comm.devices_per_node),
      FormatSig(m.overlap_gamma, 4));
}

}  // namespace fitspeed

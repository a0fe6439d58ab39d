// Steps per call and scaling what-ifs (see whatif.h).
#include "fitspeed/project/whatif.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>
#include <set>

#include "core/table.h"
#include "fitspeed/core/error.h"
#include "project/units.h"

namespace fitspeed {

double HostOverheadFit::FixedTime(double steps_per_call) const {
  return t_device_s + t_host_s / steps_per_call;
}

HostOverheadFit FitHostOverhead(const std::vector<FixedTimeAtK>& points) {
  std::set<double> distinct;
  for (const FixedTimeAtK& p : points) {
    if (!(std::isfinite(p.steps_per_call) && p.steps_per_call >= 1)) {
      throw DataError(fmt::format("steps per call must be >= 1, got {}", p.steps_per_call));
    }
    if (!(std::isfinite(p.t_s) && p.t_s >= 0)) {
      throw DataError(fmt::format("fixed time at k = {} must be >= 0 and finite, got {}",
                                  p.steps_per_call, p.t_s));
    }
    distinct.insert(p.steps_per_call);
  }
  if (distinct.size() < 2) {
    throw DataError(
        fmt::format("splitting t into device and host parts needs runs at two or "
                    "more distinct steps per call, got {}",
                    distinct.size()));
  }
  // t = t_device + t_host * x with x = 1/k: ordinary least squares.
  const int n = static_cast<int>(points.size());
  Eigen::MatrixXd design(n, 2);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    design(i, 0) = 1.0;
    design(i, 1) = 1.0 / points[i].steps_per_call;
    y(i) = points[i].t_s;
  }
  const Eigen::Matrix2d normal = design.transpose() * design;
  const Eigen::Vector2d beta = normal.ldlt().solve(design.transpose() * y);
  HostOverheadFit fit;
  fit.t_device_s = beta(0);
  fit.t_host_s = beta(1);
  fit.points = n;
  fit.dof = n - 2;
  if (fit.dof > 0) {
    const double s2 = (y - design * beta).squaredNorm() / fit.dof;
    fit.covariance = s2 * normal.inverse();
  }
  return fit;
}

SpeedLaw WithStepsPerCall(const SpeedLaw& law, const HostOverheadFit& fit, double steps_per_call) {
  ValidateSpeedLaw(law, "law");
  if (!(std::isfinite(steps_per_call) && steps_per_call >= 1)) {
    throw UsageError(fmt::format("steps per call must be >= 1, got {}", steps_per_call));
  }
  SpeedLaw out = law;
  out.t_s = fit.FixedTime(steps_per_call);
  if (!(out.t_s >= 0)) {
    throw DataError(
        fmt::format("the host-overhead fit gives t = {} s at k = {}; a fixed time "
                    "must be >= 0",
                    out.t_s, steps_per_call));
  }
  out.covariance(0, 1) = out.covariance(1, 0) = 0;
  if (fit.dof > 0) {
    // Var(t_device + t_host/k) = c00 + 2 c01/k + c11/k^2.
    const double x = 1.0 / steps_per_call;
    out.covariance(1, 1) =
        fit.covariance(0, 0) + 2 * x * fit.covariance(0, 1) + x * x * fit.covariance(1, 1);
    out.dof = law.has_covariance() ? std::min(law.dof, fit.dof) : 0;
  } else {
    out.covariance(1, 1) = 0;
  }
  if (out.dof == 0) out.covariance.setZero();
  return out;
}

std::vector<FixedTimeAtK> ParseFixedTimesAtK(const std::vector<std::string>& items,
                                             const std::string& what) {
  std::vector<FixedTimeAtK> points;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw UsageError(fmt::format("{} '{}' is not K=SECONDS", what, item));
    }
    double k = 0;
    try {
      k = std::stod(item.substr(0, eq));
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{} '{}': K is not a number", what, item));
    }
    points.push_back({k, ParseSeconds(item.substr(eq + 1), what)});
  }
  return points;
}

std::vector<EpochModel> LawModels(const Configuration& c, const Workload& w,
                                  const WhatIfs& whatifs) {
  std::vector<EpochModel> models;
  const std::string name = c.Name();
  const bool scaled = whatifs.scale_v0 != 1 || whatifs.scale_t != 1;
  for (double b : c.batches) {
    models.push_back(EpochModelFromLaw(c.law, b, w, name, c.devices));
    if (scaled) {
      models.push_back(EpochModelFromLaw(
          ScaleSpeedLaw(c.law, whatifs.scale_v0, whatifs.scale_t), b, w,
          fmt::format("{} what-if v0x{} tx{}", name, FormatSig(whatifs.scale_v0, 4),
                      FormatSig(whatifs.scale_t, 4)),
          c.devices));
      models.back().origin = "what-if";
    }
    if (whatifs.host) {
      models.push_back(EpochModelFromLaw(
          WithStepsPerCall(c.law, *whatifs.host, whatifs.steps_per_call), b, w,
          fmt::format("{} k={}", name, FormatSig(whatifs.steps_per_call, 6)), c.devices));
      models.back().origin = "what-if";
    }
  }
  return models;
}

std::vector<std::string> WhatIfNotes(const WhatIfs& whatifs) {
  std::vector<std::string> notes;
  if (whatifs.host) {
    const HostOverheadFit& host = *whatifs.host;
    const double k = whatifs.steps_per_call;
    notes.push_back(fmt::format(
        "steps per call: t(k) = t_device + t_host/k fitted from {} runs: t_device = {} s, "
        "t_host = {} s; rows 'k={}' use t({}) = {} s",
        host.points, FormatSig(host.t_device_s, 4), FormatSig(host.t_host_s, 4), FormatSig(k, 6),
        FormatSig(k, 6), FormatSig(host.FixedTime(k), 4)));
  }
  if (whatifs.scale_v0 != 1 || whatifs.scale_t != 1) {
    notes.push_back(
        fmt::format("what-if rows: v0 x{} and t x{} (e.g. mixed precision, a faster "
                    "all-reduce), same interval method",
                    FormatSig(whatifs.scale_v0, 4), FormatSig(whatifs.scale_t, 4)));
  }
  return notes;
}

SpeedLaw ScaleSpeedLaw(const SpeedLaw& law, double v0_factor, double t_factor) {
  if (!(std::isfinite(v0_factor) && v0_factor > 0) || !(std::isfinite(t_factor) && t_factor > 0)) {
    throw UsageError(fmt::format("what-if factors must be > 0 and finite, got v0 x{} and t x{}",
                                 v0_factor, t_factor));
  }
  SpeedLaw out = law;
  out.v0_sps *= v0_factor;
  out.t_s *= t_factor;
  // Cov(a X, b Y) = a b Cov(X, Y).
  const Eigen::Matrix2d scale = Eigen::Vector2d(v0_factor, t_factor).asDiagonal();
  out.covariance = scale * law.covariance * scale;
  return out;
}

std::vector<double> ThroughputCurve(const SpeedLaw& law, const std::vector<double>& batches) {
  ValidateSpeedLaw(law, "law");
  std::vector<double> curve;
  for (double b : batches) {
    if (!(std::isfinite(b) && b > 0)) throw UsageError(fmt::format("batch must be > 0, got {}", b));
    curve.push_back(b / law.StepTime(b));
  }
  return curve;
}

}  // namespace fitspeed

// The throughput laws fitspeed fits, each written once as a template on the
// scalar type so that Ceres can differentiate it automatically.
//
// Adding a law takes a struct here (name, formula, parameters with units and
// bounds, Throughput<T>, Asymptote, Start), one line in Laws() (fit.cc) and
// one type in the typed law test (tests/fit/laws_test.cc).
#ifndef FITSPEED_SRC_FIT_LAWS_H_
#define FITSPEED_SRC_FIT_LAWS_H_

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"

namespace fitspeed {

// One parameter of a law: its name, unit and lower bound. A strict bound
// (value > lower) is enforced as value >= lower + a tiny fraction of the start.
struct ParamSpec {
  const char* name;
  const char* unit;
  double lower;
  bool strict;
};

// Shared defaults of every law (CRTP): a law may hide any of them with its own.
template <class Law>
struct LawBase {
  // The batch at which the throughput reaches `fraction` of the asymptote,
  // found by bisection on the law itself; NaN if the law has no finite
  // asymptote or never reaches it.
  static double BatchAtFraction(const double* params, double fraction) {
    const double target = fraction * Law::Asymptote(params);
    if (!std::isfinite(target) || target <= 0) return std::numeric_limits<double>::quiet_NaN();
    double low = 0, high = 1;
    for (int i = 0; Law::Throughput(params, high) < target; ++i) {
      if (i == 2000 || !std::isfinite(high)) return std::numeric_limits<double>::quiet_NaN();
      low = high;
      high *= 2;
    }
    for (int i = 0; i < 200 && high - low > 1e-15 * high; ++i) {
      const double mid = 0.5 * (low + high);
      (Law::Throughput(params, mid) < target ? low : high) = mid;
    }
    return 0.5 * (low + high);
  }
};

// fitspeed's law (docs/design.md "The law"; NIST StRD Misra1d with b1 = v0, b2 = 1/(v0 t)):
// step time T(b) = b/v0 + t, throughput v(b) = b/T(b).
struct HyperbolicLaw : LawBase<HyperbolicLaw> {
  static constexpr const char* kName = "hyperbolic";
  static constexpr const char* kFormula = "v(b) = b/(b/v0 + t)";
  static constexpr int kNumParams = 2;
  static constexpr std::array<ParamSpec, kNumParams> kParams{{
      {"v0", "samples/s", 0.0, true},
      {"t", "s", 0.0, false},
  }};

  template <typename T>
  static T Throughput(const T* params, const T& batch) {
    return batch / (batch / params[0] + params[1]);
  }
  static double Asymptote(const double* params) { return params[0]; }
  // v = f*v0 at b = f/(1-f) * v0*t: b_half = v0*t, b_90 = 9*v0*t.
  static double BatchAtFraction(const double* params, double fraction) {
    return fraction / (1 - fraction) * params[0] * params[1];
  }
  // Weighted linear least squares in (1/v0, t) (step time is linear in b), with
  // the weights that make it the objective's own residual to first order.
  static std::array<double, kNumParams> Start(const std::vector<StepObservation>& data,
                                              Objective objective);
};

// Exponential saturation (NIST StRD Misra1a with b1 = vmax, b2 = 1/b_scale):
// v(b) = vmax * (1 - exp(-b/b_scale)).
struct ExponentialLaw : LawBase<ExponentialLaw> {
  static constexpr const char* kName = "exponential";
  static constexpr const char* kFormula = "v(b) = vmax*(1 - exp(-b/b_scale))";
  static constexpr int kNumParams = 2;
  static constexpr std::array<ParamSpec, kNumParams> kParams{{
      {"vmax", "samples/s", 0.0, true},
      {"b_scale", "samples", 0.0, true},
  }};

  template <typename T>
  static T Throughput(const T* params, const T& batch) {
    using std::exp;
    return params[0] * (1.0 - exp(-batch / params[1]));
  }
  static double Asymptote(const double* params) { return params[0]; }
  // The hyperbolic start mapped to the curve with the same asymptote and the
  // same initial slope: vmax = v0, b_scale = v0*t.
  static std::array<double, kNumParams> Start(const std::vector<StepObservation>& data,
                                              Objective objective);
};

// The residual of one point under `objective`, given the law's throughput at
// the point's batch; `observed` is a step time (s) or a throughput (samples/s)
// as ObservedQuantity() says.
template <typename T>
T ObjectiveResidual(Objective objective, double batch, double observed, const T& throughput) {
  switch (objective) {
    case Objective::kAbsoluteThroughput:
      return throughput - observed;
    case Objective::kAbsoluteTime:
      return batch / throughput - observed;
    case Objective::kRelativeTime:
      break;
  }
  return (batch / throughput) / observed - 1.0;
}

// What a point's `observed` is under `objective`: throughput or step time.
inline double ObservedQuantity(Objective objective, const StepObservation& observation) {
  return objective == Objective::kAbsoluteThroughput ? observation.throughput_sps()
                                                     : observation.step_time_s;
}

}  // namespace fitspeed

#endif  // FITSPEED_SRC_FIT_LAWS_H_

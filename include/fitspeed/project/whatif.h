// What-ifs on a fitted law: host overhead amortised over k steps per call
// (Keras `steps_per_execution`), and scaling v0 (e.g. mixed precision) or t
// (e.g. a faster all-reduce).
#ifndef FITSPEED_PROJECT_WHATIF_H_
#define FITSPEED_PROJECT_WHATIF_H_

#include <Eigen/Core>
#include <vector>

#include "fitspeed/project/epochs.h"

namespace fitspeed {

// The fixed time t measured (or fitted) at k steps per call.
struct FixedTimeAtK {
  double steps_per_call = 1;  // k >= 1
  double t_s = 0;             // fixed time per step at that k
};

// t(k) = t_device + t_host/k (docs/design.md, "Host overhead").
struct HostOverheadFit {
  double t_device_s = 0;  // per step on the device, whatever k
  double t_host_s = 0;    // per call on the host, shared by the k steps
  // Covariance of (t_device, t_host) from the residuals; used when dof > 0.
  Eigen::Matrix2d covariance = Eigen::Matrix2d::Zero();
  int dof = 0;  // points - 2
  int points = 0;
  double FixedTime(double steps_per_call) const;
};

// Ordinary least squares of t on 1/k. Needs >= 2 distinct k; throws DataError
// otherwise or on a non-finite / negative t or k < 1. A negative fitted part
// is reported as fitted (the data decide), not clipped.
HostOverheadFit FitHostOverhead(const std::vector<FixedTimeAtK>& points);

// The law with t replaced by t(k) of `fit` (covariance of v0 kept, t's own
// uncertainty taken from the host-overhead fit at k, no cross term).
SpeedLaw WithStepsPerCall(const SpeedLaw& law, const HostOverheadFit& fit, double steps_per_call);

// The law with v0 * v0_factor and t * t_factor; the covariance scales with
// them. Throws UsageError unless both factors are > 0 and finite.
SpeedLaw ScaleSpeedLaw(const SpeedLaw& law, double v0_factor, double t_factor);

// Throughput b/T(b) of `law` at each batch (for old-against-new curves).
std::vector<double> ThroughputCurve(const SpeedLaw& law, const std::vector<double>& batches);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_WHATIF_H_

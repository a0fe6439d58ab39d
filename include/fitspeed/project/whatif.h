// What-ifs on a fitted law: host overhead amortised over k steps per call
// (Keras `steps_per_execution`), and scaling v0 (e.g. mixed precision) or t
// (e.g. a faster all-reduce).
#ifndef FITSPEED_PROJECT_WHATIF_H_
#define FITSPEED_PROJECT_WHATIF_H_

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/project/config.h"
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

// Fixed times "K=SECONDS" (K a number, SECONDS a duration ParseSeconds
// reads: "0.05", "50ms"), as `project --spe-t` takes them. Throws UsageError
// naming `what` (the option) and the item that is not of that form.
std::vector<FixedTimeAtK> ParseFixedTimesAtK(const std::vector<std::string>& items,
                                             const std::string& what = "--spe-t");

// The law with t replaced by t(k) of `fit` (covariance of v0 kept, t's own
// uncertainty taken from the host-overhead fit at k, no cross term).
SpeedLaw WithStepsPerCall(const SpeedLaw& law, const HostOverheadFit& fit, double steps_per_call);

// The law with v0 * v0_factor and t * t_factor; the covariance scales with
// them. Throws UsageError unless both factors are > 0 and finite.
SpeedLaw ScaleSpeedLaw(const SpeedLaw& law, double v0_factor, double t_factor);

// The what-ifs projected beside each law (`project --scale-v0/--scale-t`,
// `--spe-t/--spe-k`).
struct WhatIfs {
  double scale_v0 = 1;                  // v0 x this (1 and scale_t 1: no scaled rows)
  double scale_t = 1;                   // t x this
  std::optional<HostOverheadFit> host;  // t(k) fitted; rows at steps_per_call
  double steps_per_call = 1;            // k of the host rows (>= 1)
};

// One EpochModelFromLaw per batch of `config`, named config.Name(), each
// followed by its what-ifs ("NAME what-if v0xA txB", "NAME k=K"; origin
// "what-if").
std::vector<EpochModel> LawModels(const Configuration& config, const Workload& workload,
                                  const WhatIfs& whatifs = {});

// The projection's assumptions the what-ifs add: the host-overhead fit and
// the rows it gives, and the scale factors; none when there are no what-ifs.
std::vector<std::string> WhatIfNotes(const WhatIfs& whatifs);

// Throughput b/T(b) of `law` at each batch (for old-against-new curves).
std::vector<double> ThroughputCurve(const SpeedLaw& law, const std::vector<double>& batches);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_WHATIF_H_

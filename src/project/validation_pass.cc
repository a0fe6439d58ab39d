#include "project/validation_pass.h"

#include <algorithm>

#include "fitspeed/core/sample.h"

namespace fitspeed {

double LawVariance(const Eigen::Vector2d& gradient, const Eigen::Matrix2d& covariance) {
  return std::max(0.0, gradient.dot(covariance * gradient));
}

ValidationPass ValidationPassOf(const ValidationSpec& val, double train_batch,
                                const SpeedLaw& training, int devices) {
  ValidationPass pass;
  const double batch = val.batch > 0 ? val.batch : train_batch;
  // An evaluation pass covers every validation sample (last batch partial).
  pass.steps = StepsPerEpoch(val.samples, batch, StepsRule::kKeepPartial);
  if (!val.law) {
    // Forward only on each device: forward_fraction of the per-sample time,
    // fixed_fraction of t.
    const double v0_all = training.v0_sps * devices;
    pass.time_s = val.samples * val.forward_fraction / v0_all +
                  pass.steps * val.fixed_fraction * training.t_s;
    pass.training_gradient = Eigen::Vector2d(
        -val.samples * val.forward_fraction / (devices * training.v0_sps * training.v0_sps),
        pass.steps * val.fixed_fraction);
    return pass;
  }
  const SpeedLaw& law = *val.law;
  pass.time_s = val.samples / law.v0_sps + pass.steps * law.t_s;
  if (law.has_covariance()) {
    // d time / d(v0, t).
    const Eigen::Vector2d gradient(-val.samples / (law.v0_sps * law.v0_sps), pass.steps);
    pass.variance_s2 = LawVariance(gradient, law.covariance);
  }
  return pass;
}

}  // namespace fitspeed

// The validation pass of a projected epoch, shared by the single-device
// (epochs.cc) and the data-parallel (scaling.cc) epoch models.
#ifndef FITSPEED_SRC_PROJECT_VALIDATION_PASS_H_
#define FITSPEED_SRC_PROJECT_VALIDATION_PASS_H_

#include <Eigen/Dense>

#include "fitspeed/project/epochs.h"

namespace fitspeed {

// The variance g' C g of a linear combination of (v0, t) with gradient g, for
// a law whose (v0, t) have covariance C; never below 0 (rounding).
double LawVariance(const Eigen::Vector2d& gradient, const Eigen::Matrix2d& covariance);

struct ValidationPass {
  // Every validation sample, last batch partial, at the validation batch.
  double steps = 0;
  // With a measured law (ValidationSpec::law): samples/v0 + steps*t. Derived
  // from the training law (v0, t) on n devices: forward only, no all-reduce,
  // samples*forward_fraction/(n*v0) + steps*fixed_fraction*t. Seconds.
  double time_s = 0;
  // The variance of time_s from the measured law's covariance, s^2; 0 without
  // one and for a derived pass.
  double variance_s2 = 0;
  // d time_s / d(v0, t) of the training law: (0, 0) for a measured pass. A
  // derived pass's uncertainty is the training law's, so it joins the
  // training time's gradient.
  Eigen::Vector2d training_gradient = Eigen::Vector2d::Zero();
};

// The validation pass of `val` (samples > 0) at its batch, or at
// `train_batch` when it has none, in an epoch of `training` on `devices`
// devices (training.v0_sps counts one of them).
ValidationPass ValidationPassOf(const ValidationSpec& val, double train_batch,
                                const SpeedLaw& training, int devices);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_PROJECT_VALIDATION_PASS_H_

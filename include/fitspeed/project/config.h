// Configurations to project or plan with: a device kind and count, its law,
// and the batches to consider, taken from a fit result, from a fit JSON file
// (schema "fitspeed.fit/1", docs/design.md "Schemas"), or from numbers.
#ifndef FITSPEED_PROJECT_CONFIG_H_
#define FITSPEED_PROJECT_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/project/epochs.h"
#include "fitspeed/project/scaling.h"

namespace fitspeed {

struct Configuration {
  std::string label;      // the fit group's label (a device name, a series key...)
  std::string precision;  // the fit group's precision, may be empty
  int devices = 1;
  SpeedLaw law;  // v0 of all `devices` together
  // Global batches measured for this configuration (sorted, distinct).
  std::vector<double> batches;
  bool usable = true;                 // the fit was usable
  std::vector<std::string> warnings;  // the fit's warnings
  // "label" or "label precision" or "devices=N" when both are empty.
  std::string Name() const;
};

// One configuration per hyperbolic group of `result`; batches are the
// distinct batches of the group's samples in `samples` (as read, not the
// effective batches of epoch-time points). Throws DataError when a group is
// not of the hyperbolic law.
std::vector<Configuration> ConfigurationsFromFit(const FitResult& result,
                                                 const std::vector<Sample>& samples);

// Parses a "fitspeed.fit/1" JSON text. The covariance of (v0, t) is rebuilt
// from the standard errors and the correlation "v0,t"; batches are the
// points' batches (effective batches for epoch-time points). Throws DataError
// naming `source` and the field on malformed or unusable content.
std::vector<Configuration> ConfigurationsFromFitJson(std::string_view text,
                                                     const std::string& source);

// The in-node communication of `config` scaled to more devices, calibrated
// from the configurations of `all` with its label and precision (`project
// --comm-from-fit`): t(n) - t(1) of their laws fitted to the ring's shape
// (FitRingToFixedTimes; `config` is among them). Throws DataError unless one
// of them is on 1 device and one on more.
RingCommFit FitRingToConfigurations(const Configuration& config,
                                    const std::vector<Configuration>& all);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_CONFIG_H_

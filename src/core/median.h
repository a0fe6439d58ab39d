// The median of a set of numbers: what the sweeps, the link benchmark, the
// TensorBoard reader and the fit's starting values take of repeated values.
#ifndef FITSPEED_SRC_CORE_MEDIAN_H_
#define FITSPEED_SRC_CORE_MEDIAN_H_

#include <vector>

namespace fitspeed {

// The middle value, or the mean of the two middle values of an even count.
// `values` must not be empty (an internal error otherwise).
double Median(std::vector<double> values);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_MEDIAN_H_

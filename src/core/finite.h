// Checks of a number read or given: finite and positive, finite and not negative.
#ifndef FITSPEED_SRC_CORE_FINITE_H_
#define FITSPEED_SRC_CORE_FINITE_H_

#include <cmath>

namespace fitspeed {

inline bool PositiveFinite(double x) { return std::isfinite(x) && x > 0; }
inline bool NonNegativeFinite(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_FINITE_H_

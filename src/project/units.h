// Quantities with units on the command line: bandwidths ("50Gbit/s",
// "6.25GB/s"), durations ("5us", "90m", "1:30:00").
#ifndef FITSPEED_SRC_PROJECT_UNITS_H_
#define FITSPEED_SRC_PROJECT_UNITS_H_

#include <string_view>

namespace fitspeed {

// Bytes per second from a number and a unit: B/s, kB/s, MB/s, GB/s, TB/s
// (powers of 1000), KiB/s, MiB/s, GiB/s (powers of 1024), bit/s, kbit/s,
// Mbit/s, Gbit/s, Tbit/s (and the short forms bps, Kbps, Mbps, Gbps, Tbps).
// A bare number is bytes per second. Throws UsageError naming `what` unless
// the value is > 0 and finite.
double ParseBandwidth(std::string_view text, std::string_view what = "bandwidth");

// Seconds from "h:mm:ss", "m:ss", or a number with an optional unit: ns, us,
// ms, s, m (or min), h, d. A bare number is seconds. Throws UsageError naming
// `what` unless the value is >= 0 and finite.
double ParseSeconds(std::string_view text, std::string_view what = "duration");

}  // namespace fitspeed

#endif  // FITSPEED_SRC_PROJECT_UNITS_H_

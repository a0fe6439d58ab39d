// Cost of a run: devices x hours x price per device-hour. Prices are given by
// the user (fitspeed ships no price catalog: prices change and differ by
// region and contract).
#ifndef FITSPEED_PROJECT_COST_H_
#define FITSPEED_PROJECT_COST_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fitspeed {

// Prices per device-hour, in the user's currency: one for every label, and/or
// one per label (a device name such as "tpu" or "t4").
struct PriceList {
  std::optional<double> default_per_device_hour;
  std::map<std::string, double> per_label;

  // The price of `label`: its own, else the default, else nullopt.
  std::optional<double> For(const std::string& label) const;
  bool empty() const { return !default_per_device_hour && per_label.empty(); }
};

// Parses "2.48" (every label) or "tpu=4.5" (one label) items; a repeated key
// replaces the earlier price. Throws UsageError on a malformed or non-positive
// price.
PriceList ParsePrices(const std::vector<std::string>& items);

// devices * seconds/3600 * price. Throws UsageError on a negative or
// non-finite argument or devices < 1.
double RunCost(double seconds, int devices, double price_per_device_hour);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_COST_H_

// Prices per device-hour and the cost of a run.
#include "fitspeed/project/cost.h"

#include <fmt/format.h>

#include <cmath>

#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

std::optional<double> PriceList::For(const std::string& label) const {
  const auto it = per_label.find(label);
  if (it != per_label.end()) return it->second;
  return default_per_device_hour;
}

PriceList ParsePrices(const std::vector<std::string>& items) {
  PriceList prices;
  for (const std::string& item : items) {
    const size_t eq = item.rfind('=');
    const std::string_view value = io::Trim(
        eq == std::string::npos ? std::string_view(item) : std::string_view(item).substr(eq + 1));
    const std::optional<double> price = io::ToDouble(value);
    if (!price || !std::isfinite(*price) || *price <= 0) {
      throw UsageError(fmt::format(
          "--price '{}': a price per device-hour must be a positive number, as PRICE or "
          "LABEL=PRICE",
          item));
    }
    if (eq == std::string::npos) {
      prices.default_per_device_hour = *price;
      continue;
    }
    const std::string label(io::Trim(std::string_view(item).substr(0, eq)));
    if (label.empty()) throw UsageError(fmt::format("--price '{}': the label is empty", item));
    prices.per_label[label] = *price;
  }
  return prices;
}

double RunCost(double seconds, int devices, double price_per_device_hour) {
  if (!std::isfinite(seconds) || seconds < 0) {
    throw UsageError(fmt::format("run time {} s must be finite and >= 0", seconds));
  }
  if (devices < 1) throw UsageError(fmt::format("devices must be >= 1, got {}", devices));
  if (!std::isfinite(price_per_device_hour) || price_per_device_hour < 0) {
    throw UsageError(fmt::format("price per device-hour must be finite and >= 0, got {}",
                                 price_per_device_hour));
  }
  return devices * (seconds / 3600.0) * price_per_device_hour;
}

}  // namespace fitspeed

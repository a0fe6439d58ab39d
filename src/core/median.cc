#include "core/median.h"

#include <algorithm>
#include <cstddef>

#include "fitspeed/core/error.h"

namespace fitspeed {

double Median(std::vector<double> values) {
  FITSPEED_CHECK(!values.empty(), "median of nothing");
  const size_t mid = values.size() / 2;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(mid);
  std::nth_element(values.begin(), middle, values.end());
  const double upper = *middle;
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), middle) + upper) / 2;
}

}  // namespace fitspeed

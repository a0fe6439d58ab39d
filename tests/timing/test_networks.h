// Helpers for the timing tests: the small test networks
// (test_network_builders.h), finite-difference gradient checks and the
// relative error the backends are compared by.
#ifndef FITSPEED_TESTS_TIMING_TEST_NETWORKS_H_
#define FITSPEED_TESTS_TIMING_TEST_NETWORKS_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/model/network.h"
#include "timing/executor.h"
#include "timing/test_network_builders.h"

namespace fitspeed::testing {

// Compares the backward pass of `step` with central finite differences of its
// loss, (L(w+h) - L(w-h))/(2h), for up to `per_tensor` elements of every
// trainable parameter (spread evenly): |analytic - fd| <= abs_tol + rel_tol*|fd|.
// Returns the largest |analytic - fd| / (abs_tol + rel_tol*|fd|) seen (< 1 passes).
inline double ExpectGradientsMatchFiniteDifferences(timing::StepExecutor& step, double h,
                                                    double abs_tol, double rel_tol,
                                                    int64_t per_tensor) {
  step.Forward();
  step.Backward();
  double worst = 0;
  for (size_t i = 0; i < step.params().size(); ++i) {
    const timing::ParamRef& p = step.params()[i];
    if (!p.trainable) continue;
    const std::vector<double> grad = step.Grad(i);
    const std::vector<double> values = step.Param(i);
    const int64_t stride = std::max<int64_t>(1, p.elements / per_tensor);
    for (int64_t k = 0; k < p.elements; k += stride) {
      std::vector<double> moved = values;
      moved[static_cast<size_t>(k)] = values[static_cast<size_t>(k)] + h;
      step.SetParam(i, moved);
      const double up = step.Forward();
      moved[static_cast<size_t>(k)] = values[static_cast<size_t>(k)] - h;
      step.SetParam(i, moved);
      const double down = step.Forward();
      step.SetParam(i, values);
      const double fd = (up - down) / (2 * h);
      const double allowed = abs_tol + rel_tol * std::abs(fd);
      worst = std::max(worst, std::abs(grad[static_cast<size_t>(k)] - fd) / allowed);
      EXPECT_NEAR(grad[static_cast<size_t>(k)], fd, abs_tol + rel_tol * std::abs(fd))
          << step.network().name << " " << p.name << "[" << k << "]";
    }
  }
  return worst;
}

// sqrt(sum (a-b)^2) / max(sqrt(sum b^2), floor): the relative error of a
// against b. The floor keeps tensors that are zero up to rounding (the
// gradient of a bias feeding a batch-norm, which removes it) from dividing
// rounding noise by zero.
inline double RelativeError(const std::vector<double>& a, const std::vector<double>& b,
                            double floor = 1e-2) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), floor);
}

}  // namespace fitspeed::testing

#endif  // FITSPEED_TESTS_TIMING_TEST_NETWORKS_H_

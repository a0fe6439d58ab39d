// The log-logistic efficiency of the kernel-curve fits (fitspeed/evidence/kernels.h),
// written once for double and ceres::Jet so that the fit's Jacobian is this
// function's exact derivative:
//   eff(F) = e_max / (1 + (F_half / F)^k),  e_max = exp(log_e_max), F_half = exp(log_f_half).
// tests/device/kernels_test.cc checks the Jet's derivatives against the
// analytic ones.
#ifndef FITSPEED_SRC_EVIDENCE_LOG_LOGISTIC_H_
#define FITSPEED_SRC_EVIDENCE_LOG_LOGISTIC_H_

#include <cmath>

namespace fitspeed {

template <typename T>
T LogLogisticEfficiency(const T& log_e_max, const T& log_f_half, const T& slope, double flops) {
  using std::exp;
  return exp(log_e_max) / (T(1) + exp(slope * (log_f_half - std::log(flops))));
}

}  // namespace fitspeed

#endif  // FITSPEED_SRC_EVIDENCE_LOG_LOGISTIC_H_

// Optimizer updates, elementwise and parallel (OpenMP), written once for float
// and double: over one tensor, or over all of a network's tensors in one
// parallel region (as PyTorch's multi-tensor "foreach" optimizers do, one
// fork/join per step instead of one per tensor). Definitions as in
// fitspeed/model/network_cost.h's Optimizer (torch.optim.SGD; Kingma & Ba 2015, Adam,
// Algorithm 1 with the bias corrections folded into the step size, as at the
// end of their section 2).
#ifndef FITSPEED_TIMING_OPTIMIZER_H_
#define FITSPEED_TIMING_OPTIMIZER_H_

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fitspeed/model/network_cost.h"

// Vectorizes the loop that follows where the file is built with OpenMP.
#ifdef _OPENMP
#define FITSPEED_SIMD _Pragma("omp simd")
#else
#define FITSPEED_SIMD
#endif

namespace fitspeed::timing {

// Calls f(begin, end) on contiguous parts of [0, n), one per thread, in
// parallel where the file is built with OpenMP (the library is; a test
// including this header may not be).
template <typename F>
void ParallelChunks(int64_t n, F&& f) {
#ifdef _OPENMP
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t chunk = (n + threads - 1) / threads;
    const int64_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    if (begin < end) f(begin, end);
  }
#else
  f(int64_t{0}, n);
#endif
}

// w -= lr*g, on elements [begin, end).
template <typename T>
void SgdRange(T* w, const T* g, int64_t begin, int64_t end, double lr) {
  const T a = static_cast<T>(lr);
  FITSPEED_SIMD
  for (int64_t i = begin; i < end; ++i) w[i] -= a * g[i];
}

// m = mu*m + g; w -= lr*m
template <typename T>
void MomentumRange(T* w, const T* g, T* m, int64_t begin, int64_t end, double lr, double mu) {
  const T a = static_cast<T>(lr), b = static_cast<T>(mu);
  FITSPEED_SIMD
  for (int64_t i = begin; i < end; ++i) {
    m[i] = b * m[i] + g[i];
    w[i] -= a * m[i];
  }
}

// Adam's step size at update `step` (1-based): lr*sqrt(1-beta2^t)/(1-beta1^t).
inline double AdamStepSize(double lr, double beta1, double beta2, int64_t step) {
  const double t = static_cast<double>(step);
  return lr * std::sqrt(1 - std::pow(beta2, t)) / (1 - std::pow(beta1, t));
}

// m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g; w -= step_size*m/(sqrt(v) + eps)
template <typename T>
void AdamRange(T* w, const T* g, T* m, T* v, int64_t begin, int64_t end, double step_size,
               double beta1, double beta2, double eps) {
  const T b1 = static_cast<T>(beta1), c1 = static_cast<T>(1 - beta1);
  const T b2 = static_cast<T>(beta2), c2 = static_cast<T>(1 - beta2);
  const T a = static_cast<T>(step_size), e = static_cast<T>(eps);
  FITSPEED_SIMD
  for (int64_t i = begin; i < end; ++i) {
    m[i] = b1 * m[i] + c1 * g[i];
    v[i] = b2 * v[i] + c2 * g[i] * g[i];
    w[i] -= a * m[i] / (std::sqrt(v[i]) + e);
  }
}

// v = a*v + (1-a)*g*g; m = mu*m + g/(sqrt(v) + eps); w -= lr*m (torch.optim.RMSprop
// with momentum mu, not centered).
template <typename T>
void RmspropRange(T* w, const T* g, T* m, T* v, int64_t begin, int64_t end, double lr, double alpha,
                  double mu, double eps) {
  const T a = static_cast<T>(alpha), c = static_cast<T>(1 - alpha);
  const T l = static_cast<T>(lr), b = static_cast<T>(mu), e = static_cast<T>(eps);
  FITSPEED_SIMD
  for (int64_t i = begin; i < end; ++i) {
    v[i] = a * v[i] + c * g[i] * g[i];
    m[i] = b * m[i] + g[i] / (std::sqrt(v[i]) + e);
    w[i] -= l * m[i];
  }
}

// The whole-tensor updates.
template <typename T>
void SgdUpdate(T* w, const T* g, int64_t n, double lr) {
  ParallelChunks(n, [&](int64_t b, int64_t e) { SgdRange(w, g, b, e, lr); });
}
template <typename T>
void MomentumUpdate(T* w, const T* g, T* m, int64_t n, double lr, double mu) {
  ParallelChunks(n, [&](int64_t b, int64_t e) { MomentumRange(w, g, m, b, e, lr, mu); });
}
template <typename T>
void AdamUpdate(T* w, const T* g, T* m, T* v, int64_t n, double step_size, double beta1,
                double beta2, double eps) {
  ParallelChunks(
      n, [&](int64_t b, int64_t e) { AdamRange(w, g, m, v, b, e, step_size, beta1, beta2, eps); });
}

template <typename T>
void RmspropUpdate(T* w, const T* g, T* m, T* v, int64_t n, double lr, double alpha, double mu,
                   double eps) {
  ParallelChunks(n,
                 [&](int64_t b, int64_t e) { RmspropRange(w, g, m, v, b, e, lr, alpha, mu, eps); });
}

// One tensor of a multi-tensor update: weights, gradient, state (m, v as the
// optimizer needs them) and element count.
template <typename T>
struct UpdateSlot {
  T* w = nullptr;
  const T* g = nullptr;
  T* m = nullptr;
  T* v = nullptr;
  int64_t n = 0;
};

// The settings of one update; adam_step_size from AdamStepSize() for this step.
struct UpdateSettings {
  Optimizer optimizer = Optimizer::kSgdMomentum;
  double learning_rate = 0;
  double momentum = 0;
  double beta1 = 0, beta2 = 0, epsilon = 0;
  double adam_step_size = 0;
  double rmsprop_alpha = 0;
};

// Updates every slot in one parallel region: the concatenated elements are
// split evenly between the threads.
template <typename T>
void UpdateAll(const UpdateSettings& s, const std::vector<UpdateSlot<T>>& slots) {
  int64_t total = 0;
  for (const UpdateSlot<T>& slot : slots) total += slot.n;
  ParallelChunks(total, [&](int64_t begin, int64_t end) {
    int64_t base = 0;
    for (const UpdateSlot<T>& p : slots) {
      const int64_t b = std::max(begin - base, int64_t{0}), e = std::min(end - base, p.n);
      base += p.n;
      if (b >= e) continue;
      switch (s.optimizer) {
        case Optimizer::kSgd:
          SgdRange(p.w, p.g, b, e, s.learning_rate);
          break;
        case Optimizer::kSgdMomentum:
          MomentumRange(p.w, p.g, p.m, b, e, s.learning_rate, s.momentum);
          break;
        case Optimizer::kAdam:
          AdamRange(p.w, p.g, p.m, p.v, b, e, s.adam_step_size, s.beta1, s.beta2, s.epsilon);
          break;
        case Optimizer::kRmsprop:
          RmspropRange(p.w, p.g, p.m, p.v, b, e, s.learning_rate, s.rmsprop_alpha, s.momentum,
                       s.epsilon);
          break;
      }
    }
  });
}

// Batch-norm moving statistics: moving = momentum*moving + (1-momentum)*batch.
template <typename T, typename U>
void MovingAverage(T* moving, const U* batch, int64_t n, double momentum) {
  for (int64_t i = 0; i < n; ++i) {
    moving[i] = static_cast<T>(momentum * moving[i] + (1 - momentum) * batch[i]);
  }
}

}  // namespace fitspeed::timing

#endif  // FITSPEED_TIMING_OPTIMIZER_H_

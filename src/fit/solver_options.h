// The Ceres solver settings every fitspeed least-squares fit shares.
#ifndef FITSPEED_SRC_FIT_SOLVER_OPTIONS_H_
#define FITSPEED_SRC_FIT_SOLVER_OPTIONS_H_

#include <ceres/ceres.h>

namespace fitspeed {

// When a fit stops: what each caller states for itself.
struct SolverStop {
  int max_iterations = 0;
  double function_tolerance = 0;
  double parameter_tolerance = 0;
  // Ceres's own default unless a fit asks for a tighter one.
  double gradient_tolerance = ceres::Solver::Options().gradient_tolerance;
};

// Options for fitspeed's small problems (a few parameters, at most some
// hundreds of residuals): dense QR, one thread, nothing logged or printed (a
// library must not write to stderr), stopping by `stop`.
inline ceres::Solver::Options QuietSolverOptions(const SolverStop& stop) {
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_QR;
  options.logging_type = ceres::SILENT;
  options.minimizer_progress_to_stdout = false;
  options.num_threads = 1;
  options.max_num_iterations = stop.max_iterations;
  options.function_tolerance = stop.function_tolerance;
  options.parameter_tolerance = stop.parameter_tolerance;
  options.gradient_tolerance = stop.gradient_tolerance;
  return options;
}

}  // namespace fitspeed

#endif  // FITSPEED_SRC_FIT_SOLVER_OPTIONS_H_

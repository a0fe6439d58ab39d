// The Jacobian Ceres evaluates (ceres::Problem::Evaluate, compressed row
// storage) as a dense Eigen matrix: what the calibration and the kernel-curve
// fits take their parameters' covariance s^2 (J^T J)^-1 from.
#ifndef FITSPEED_SRC_FIT_DENSE_JACOBIAN_H_
#define FITSPEED_SRC_FIT_DENSE_JACOBIAN_H_

#include <ceres/ceres.h>

#include <Eigen/Dense>

namespace fitspeed {

inline Eigen::MatrixXd DenseJacobian(const ceres::CRSMatrix& crs) {
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(crs.num_rows, crs.num_cols);
  for (int row = 0; row < crs.num_rows; ++row) {
    for (int k = crs.rows[row]; k < crs.rows[row + 1]; ++k) dense(row, crs.cols[k]) = crs.values[k];
  }
  return dense;
}

}  // namespace fitspeed

#endif  // FITSPEED_SRC_FIT_DENSE_JACOBIAN_H_

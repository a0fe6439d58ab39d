// Data-parallel scaling: overlap of communication with compute (the
// all-reduce times are fitspeed/core/comm.h's), weak and strong scaling
// tables, the largest useful device count, and calibration of the
// communication model from multi-device measurements.
//
// With n devices and per-device batch b (docs/design.md, "Multi-device"):
//   T_n(b) = ((b/v0 + t_local)^g + t_comm(n)^g)^(1/g)
// g = 1: no overlap, T_n = b/v0 + t_local + t_comm(n); g -> infinity: perfect
// overlap, T_n = max(compute, comm) (Pollux, Qiao et al., OSDI'21, eq. 8).
#ifndef FITSPEED_PROJECT_SCALING_H_
#define FITSPEED_PROJECT_SCALING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/comm.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/project/epochs.h"

namespace fitspeed {

// (compute^g + comm^g)^(1/g), g >= 1 (Pollux, OSDI'21, eq. 8). Computed as
// m*((c/m)^g + (n/m)^g)^(1/g), m = max(c, n), so that large g is safe.
double OverlapTime(double compute_s, double comm_s, double gamma);

// The communication time against device count fitted to measurements: the
// ring's shape, t_comm(n) = 2(n-1)/n * bandwidth_term_s + 2(n-1)*latency_s,
// with bandwidth_term_s = S/B. Measured in-node times often grow faster than
// the bandwidth term alone (devices sharing one PCIe root); the per-step term
// then absorbs that growth.
struct RingCommFit {
  double bandwidth_term_s = 0;        // S/B: the bandwidth term in seconds
  double latency_s = 0;               // a: seconds per ring step
  int points = 0;                     // observations with more than one device
  double rms_residual_s = 0;          // root mean square residual of t_comm
  double Predict(int devices) const;  // t_comm(n) by the ring formula
  // The link this calibrates for a gradient of `gradient_bytes`: B = S/bandwidth_term
  // (infinite when the bandwidth term is 0), a = latency_s.
  Link AsLink(double gradient_bytes) const;
};

// A measured communication time (e.g. Pollux's sync_time) at a device count.
struct CommObservation {
  int devices = 1;
  double comm_s = 0;
};

// Fits the ring's shape to the observations with devices > 1 by non-negative
// least squares (observations on one device are ignored). Throws DataError
// when none has more than one device or a value is not finite.
RingCommFit FitRingCommTimes(const std::vector<CommObservation>& observations);

// Fits t(n) - t(1) of a fitted device scaling (FitResult::scaling: the law
// fitted per device count) to the ring's shape. Needs a row with 1 device and
// one with more; throws DataError otherwise.
RingCommFit FitRingToFixedTimes(const DeviceScaling& scaling);

// Data parallelism over n devices of one kind.
struct DataParallelModel {
  // One device: T_1(b) = b/v0 + t_local at per-device batch b.
  SpeedLaw single_device;
  // Bytes all-reduced per step (see GradientBytes).
  double gradient_bytes = 0;
  CommModel comm;
  // Overlap exponent g >= 1 (1: communication after compute).
  double overlap_gamma = 1;
};
void ValidateDataParallelModel(const DataParallelModel& model);  // throws UsageError

double CommTime(const DataParallelModel& model, int devices);
// Step time at `per_device_batch` on `devices` devices.
double StepTime(const DataParallelModel& model, int devices, double per_device_batch);

enum class ScalingMode {
  kWeak,    // per-device batch fixed: global batch n*b
  kStrong,  // global batch fixed: per-device batch B/n
};
std::string ScalingModeName(ScalingMode mode);  // "weak", "strong"

struct ScalingRow {
  ScalingMode mode = ScalingMode::kWeak;
  int devices = 1;
  double per_device_batch = 0;
  double global_batch = 0;
  double comm_s = 0;  // all-reduce time, before overlap
  double step_time_s = 0;
  double throughput_sps = 0;  // global batch / step time
  double speedup = 0;         // throughput / throughput on one device (same mode)
  double efficiency = 0;      // speedup / devices
};

// Weak scaling (`batch` per device) or strong scaling (`batch` global) over
// the device counts. Throws UsageError on a count < 1 or a batch <= 0.
std::vector<ScalingRow> Scaling(const DataParallelModel& model, ScalingMode mode, double batch,
                                const std::vector<int>& devices);

// Where adding devices stops paying, for a fixed global batch.
struct UsefulDevices {
  int fastest_devices = 1;  // the device count of the highest throughput (smallest on ties)
  double fastest_throughput_sps = 0;
  double fastest_efficiency = 0;
  int efficient_devices = 1;  // the largest count whose efficiency >= min_efficiency
};

// Strong scaling of `global_batch` over 1..max_devices (per-device batch at
// least 1 sample). Throws UsageError on max_devices < 1, global_batch < 1 or
// min_efficiency outside (0, 1].
UsefulDevices LargestUsefulDevices(const DataParallelModel& model, double global_batch,
                                   int max_devices, double min_efficiency = 0.5);

// One multi-device measurement.
struct MultiDeviceStep {
  int devices = 1;
  double per_device_batch = 0;
  double step_time_s = 0;
  // The communication time left exposed after the backward pass, when
  // measured (AdaptDL's sync_time: from the last local gradient to the end of
  // the all-reduce). Under the model it is T - (b/v0 + t).
  std::optional<double> exposed_comm_s;
};

// The overlap model calibrated to multi-device measurements: with the
// single-device law fixed, (S/B, a, g) of
//   T = ((b/v0 + t)^g + (2(n-1)/n*S/B + 2(n-1)*a)^g)^(1/g)
// fitted by least squares on relative step-time residuals (Ceres, bounds
// 1e-9 <= S/B <= 1e3 s, 1e-9 <= a <= 1 s, 1 <= g <= 50, starts g = 1, 2, 4, 8).
// Steps with an exposed communication time add a second residual,
// (T - (b/v0 + t) - exposed)/T_observed, as Pollux fits its model to step and
// sync times together. With a communication fit given (e.g. from all-reduce
// times measured apart), S/B and a are held at its values and g alone is fitted.
struct OverlapFit {
  double bandwidth_term_s = 0;  // S/B
  double latency_s = 0;         // a
  double gamma = 1;             // g
  int points = 0;               // step times fitted
  int exposed_points = 0;       // exposed communication times fitted
  double rel_rmse = 0;          // root mean square of predicted/observed step time - 1
  double exposed_rmse = 0;      // root mean square exposed-time error / step time
  bool converged = false;
  Link AsLink(double gradient_bytes) const;  // B = S/bandwidth_term
};

// Throws DataError unless there are >= 3 measurements with devices > 1 (1
// with a fixed communication fit) and positive finite values, and UsageError
// on an invalid law.
OverlapFit FitOverlapModel(const SpeedLaw& single_device, const std::vector<MultiDeviceStep>& steps,
                           const std::optional<RingCommFit>& comm = std::nullopt);

// The epoch model of `devices` devices at `per_device_batch` under `model`. A
// partial last step (keep-partial rule) is timed at its own smaller batch. A
// derived validation pass runs forward only on every device with no all-reduce.
// The standard error propagates the single-device covariance through
// dT/d(v0, t) = (compute/T)^(g-1) * (-b/v0^2, 1) per step.
EpochModel EpochModelFromScaling(const DataParallelModel& model, int devices,
                                 double per_device_batch, const Workload& workload,
                                 const std::string& label = "");

// What a projection scales a single-device configuration to (`project
// --devices --scaling --max-devices --min-efficiency`).
struct ScalingRequest {
  std::vector<int> devices;  // device counts
  bool weak = true;          // per-device batch fixed
  bool strong = false;       // global batch fixed
  int max_devices = 0;       // > 0: also say where strong scaling stops paying
  double min_efficiency = 0.5;
};

// The scaling of one configuration, named `name`, at each of `batches`.
struct ScaledProjection {
  std::vector<ScalingRow> rows;    // per batch, per mode (weak, strong): Scaling's rows
  std::vector<EpochModel> models;  // EpochModelFromScaling of each row of >= 1 sample per
                                   // device, labelled "NAME MODE n=N"
  // Per batch with max_devices > 0, LargestUsefulDevices in words; then the
  // model's numbers (DataParallelModelNote).
  std::vector<std::string> notes;
};
ScaledProjection ProjectScaling(const std::string& name, const DataParallelModel& model,
                                const std::vector<double>& batches, const Workload& workload,
                                const ScalingRequest& request);

// The model in words: the all-reduce, its bytes, both links, devices per node
// and the overlap exponent, for a projection's assumptions.
std::string DataParallelModelNote(const std::string& name, const DataParallelModel& model);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_SCALING_H_

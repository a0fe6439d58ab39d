// Transfer from a user's own run: a network measured on device A predicts the
// same network on device B (what Habitat does, Yu et al., USENIX ATC'21, by
// scaling each kernel's measured time; here by calibrating the step model on A
// and applying the fitted parameters to B). docs/devices.md, "Transfer from
// your own run"; its validation on the published cases: docs/validation.md,
// "Transfer".
//
//   std::vector<fitspeed::MeasuredCase> on_a = fitspeed::ReadCasesCsv("my-v100-run.csv");
//   fitspeed::TransferCalibration t = fitspeed::CalibrateTransfer(
//       fitspeed::LoadDevice("v100-sxm2"), fitspeed::LoadDevice("a100"), on_a);
//   fitspeed::DeviceSweepResult b = fitspeed::ModelSweep(net, t.target, options);
//
// What A's cases determine (ScalesDetermined): the compute scale when their
// matrix work runs off tensor units, the tensor scale when on them, and the
// host overhead; at most one parameter per distinct measured condition
// (batch, devices, precision, layout, accumulation): a run at one batch size
// fits one parameter, the one that moves its modeled step time most. What
// was fitted carries over to B: the efficiency scales (how the network's
// kernels fare against the roofline) and, by default, the host overhead (the
// framework's per-step cost for this network, which the same script pays on B;
// on the published pairs carrying it lowered the out-of-sample median |error|
// from 9.7% to 9.3% and the mean from 15.2% to 10.1%).
#ifndef FITSPEED_CALIBRATE_TRANSFER_H_
#define FITSPEED_CALIBRATE_TRANSFER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/calibrate/cases.h"
#include "fitspeed/device/device.h"

namespace fitspeed {

struct TransferOptions {
  // Optimizer of every modeled step whose case records none.
  Optimizer optimizer = Optimizer::kSgdMomentum;
  // Also carry the host overhead fitted on A to B (when it was fitted); false:
  // B keeps its catalog host overhead. The validation on the published cases
  // chose the default (docs/validation.md, "Transfer").
  bool transfer_host = true;
  // Solver settings of the calibration on A; `parameters` and
  // `leave_one_network_out` are ignored (the transfer chooses the parameters).
  CalibrationOptions calibration;
  // ValidateTransfer only: devices used instead of the catalog device of the
  // same Device::name (e.g. calibrated device files).
  std::vector<Device> devices;
};
// Throws UsageError naming the field, its value and the rule it broke.
void ValidateTransferOptions(const TransferOptions& options);

// A calibration on A and B with what carries over applied.
struct TransferCalibration {
  std::string source_device;  // A's Device::name
  std::string target_device;  // B's Device::name
  std::string network;        // CaseNetworkKey of A's cases
  int cases = 0;              // A's measured cases
  // Distinct measured conditions (batch, devices, precision, layout,
  // accumulation) among them: the measured points, each the median throughput
  // of its cases.
  int points = 0;
  std::vector<CalibratedParameter> fitted;   // fitted on A, in enum order
  std::vector<CalibratedParameter> applied;  // of those, applied to B
  // Parameters not fitted (name and why: "not determined: ...", "one measured
  // point fits one parameter", "not carried: ..."), B's catalog value kept.
  struct Kept {
    std::string name;
    std::string reason;
  };
  std::vector<Kept> kept;
  // A's fit: relative throughput errors predicted/measured - 1 of the measured
  // points, before and after the calibration (in-sample).
  DeviceCalibration::Error source_before;
  DeviceCalibration::Error source_after;
  bool converged = false;
  std::string solver_message;
  Device target;  // B with `applied`; its sources say "calibrated elsewhere"
};

// Calibrates on `measured_on_a` (cases of one network on `source`, each
// MeasuredCase::device == source.name) and applies what carries over to
// `target`. Throws UsageError for bad options or devices of different kinds
// (the scales describe a kind's kernel libraries); DataError for no cases,
// cases of another device or of several networks (or sequence lengths), or a
// case that cannot be modeled on `source` (naming its file and line). A fit
// that does not converge is reported (converged false).
TransferCalibration CalibrateTransfer(const Device& source, const Device& target,
                                      const std::vector<MeasuredCase>& measured_on_a,
                                      const TransferOptions& options = {});

// The fitted parameters that carry over to B: all of them, less the host
// overhead (step_host_s) unless `transfer_host`.
std::vector<CalibratedParameter> CarriedParameters(const std::vector<CalibratedParameter>& fitted,
                                                   bool transfer_host);

}  // namespace fitspeed

#endif  // FITSPEED_CALIBRATE_TRANSFER_H_

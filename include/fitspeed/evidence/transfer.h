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
#ifndef FITSPEED_EVIDENCE_TRANSFER_H_
#define FITSPEED_EVIDENCE_TRANSFER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/device/device.h"
#include "fitspeed/evidence/calibrate.h"
#include "fitspeed/evidence/cases.h"
#include "fitspeed/evidence/validate.h"

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

// One of B's cases predicted by transfer from A.
struct TransferredCase {
  std::string source_device;  // A
  std::string target_device;  // B
  std::string pair;           // "A->B"
  std::string network;        // CaseNetworkKey
  Precision precision = Precision::kFp32;
  std::string framework;
  int devices = 1;
  int64_t batch = 0;
  int accumulation = 1;
  std::string key;                        // CaseKey of B's case
  std::string source;                     // MeasuredCase::source of B's case (file)
  std::vector<std::string> from_sources;  // the files of A's cases it was calibrated on
  int line = 0;                           // and its line
  double measured_sps = 0;
  double predicted_sps = 0;  // on B with A's parameters
  double catalog_sps = 0;    // on B as catalogued (no transfer), for comparison
  double error_pct = 0;      // PercentError(predicted_sps, measured_sps)
  double catalog_error_pct = 0;
  double log_ratio = 0;  // ln(measured_sps / predicted_sps): out-of-sample
};

// One transfer: A's cases of a group calibrated, B's predicted.
struct TransferFold {
  std::string source_device;
  std::string target_device;
  std::string network;
  Precision precision = Precision::kFp32;
  std::string framework;
  int devices = 1;
  int source_cases = 0;  // A's
  int target_cases = 0;  // B's, predicted when `computed`
  bool computed = false;
  std::string problem;  // why not computed
  std::vector<CalibratedParameter> fitted;
  std::vector<CalibratedParameter> applied;
  DeviceCalibration::Error source_after;  // A's in-sample fit
  ErrorSummary error;                     // of B's cases
};

// Errors of the ordered pair A->B over its folds.
struct TransferPairSummary {
  std::string source_device;
  std::string target_device;
  std::string pair;  // "A->B"
  ErrorSummary error;
  ErrorSummary catalog;           // B's catalog predictions of the same cases
  double mean_abs_error_pct = 0;  // NaN when no case
};

struct TransferValidation {
  bool transfer_host = false;          // the rule validated (TransferOptions)
  std::vector<TransferredCase> cases;  // every prediction, fold by fold
  std::vector<TransferFold> folds;     // in order of (A, B, group) first appearance
  std::vector<TransferPairSummary> pairs;
  ErrorSummary overall;
  ErrorSummary overall_catalog;
  double overall_mean_abs_error_pct = 0;  // NaN when no case
  // The same transfers under the other host rule (!transfer_host): median and
  // mean |error|, so the choice can be checked.
  ErrorSummary other_rule;
  double other_rule_mean_abs_error_pct = 0;
};

// For every ordered pair (A, B) of devices of the same kind and every group
// (network with its sequence length, precision, framework, device count) with
// modeled cases on both (unknown networks, devices and precisions a device
// lacks are skipped, as are cases B was calibrated on: Device::calibrated_on),
// calibrates on A's cases of the group (CalibrateTransfer) and predicts each of
// B's. Nothing is fitted to the case predicted.
TransferValidation ValidateTransfer(const std::vector<MeasuredCase>& cases,
                                    const TransferOptions& options = {});

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_TRANSFER_H_

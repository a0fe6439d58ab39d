// Transfer from a user's own run (fitspeed/calibrate/transfer.h) checked on
// the published cases: every pair of devices (A, B) with measurements of the
// same network, B's cases predicted by calibrating on A's (docs/validation.md,
// "Transfer").
#ifndef FITSPEED_EVIDENCE_TRANSFER_H_
#define FITSPEED_EVIDENCE_TRANSFER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/calibrate/cases.h"
#include "fitspeed/calibrate/transfer.h"
#include "fitspeed/device/device.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {

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

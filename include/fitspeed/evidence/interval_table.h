// Building the prediction-interval table (fitspeed/device/intervals.h) from
// the model's out-of-sample errors on published cases, and testing it by
// leaving one source out (docs/validation.md, "Prediction intervals").
//
//   IntervalTable table = IntervalTableFromValidation(Validate(PublishedCases(dir)));
//   CoverageReport c = LeaveOneSourceOutCoverage(table, 0.8);
#ifndef FITSPEED_EVIDENCE_INTERVAL_TABLE_H_
#define FITSPEED_EVIDENCE_INTERVAL_TABLE_H_

#include <string>
#include <vector>

#include "fitspeed/device/intervals.h"
#include "fitspeed/evidence/framework_profiles.h"
#include "fitspeed/evidence/transfer.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {

// The source of a case for intervals and their test: its file's name and, in a
// file that collects several publications (NVIDIA DeepLearningExamples' READMEs,
// Paddle's per-framework tables), the framework: "<file>/<framework>".
std::string ModelErrorSource(const std::string& file, const std::string& framework);

// The errors of the catalog predictions of a validation's modeled cases
// (ValidatedCase::predicted_sps; their devices were not calibrated on them),
// by ModelErrorClass. Cases the device was calibrated on are left out.
IntervalTable IntervalTableFromValidation(const ValidationReport& report);

// Adds the errors of transferred predictions (ValidateTransfer: each of B's
// cases predicted from A's, fitspeed/evidence/transfer.h) to table.transfer, by
// the target device's kind; the source is B's case's.
void AddTransferErrors(IntervalTable& table, const TransferValidation& transfer);

// Adds the errors of the framework profiles' predictions on held-out GPUs
// (FitFrameworkProfiles' computed folds: a GPU's runs predicted by the profile
// fitted on the framework's other GPUs) to table.framework, by the class of
// the held-out GPU and precision; the source is the case's
// (ModelErrorSource(file, framework)). Folds that could not be computed add
// nothing.
void AddFrameworkErrors(IntervalTable& table, const FrameworkProfileReport& report);

// Leave-one-source-out coverage of a class's intervals: each case's error
// against the interval For() builds from the table without the case's source.
struct CoverageRow {
  std::string error_class;
  int cases = 0;          // cases of the class
  int with_interval = 0;  // of which an interval could be built without their source
  int covered = 0;        // of which the interval contained the error
  int below = 0;          // measured below the interval (the model too fast)
  int above = 0;          // measured above it
  double coverage() const { return with_interval > 0 ? double(covered) / with_interval : 0; }
  double median_width = 0;  // median of high_factor / low_factor over the intervals
};
struct CoverageReport {
  double level = 0.8;
  std::vector<CoverageRow> classes;  // in class order
  CoverageRow overall;               // error_class "all"
};
CoverageReport LeaveOneSourceOutCoverage(const IntervalTable& table, double level);
// The same for the transferred predictions' errors (IntervalTable::transfer).
CoverageReport LeaveOneSourceOutTransferCoverage(const IntervalTable& table, double level);
// The same for the framework profiles' errors (IntervalTable::framework), with
// For()'s fallback to the kind.
CoverageReport LeaveOneSourceOutFrameworkCoverage(const IntervalTable& table, double level);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_INTERVAL_TABLE_H_

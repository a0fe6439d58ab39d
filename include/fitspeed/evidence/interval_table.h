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
#include "fitspeed/evidence/mlperf.h"
#include "fitspeed/evidence/transfer.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {

// The publisher of a case for intervals and their test: the organization whose
// harness produced the runs of its file (data/publishers.json, "case_files":
// NVIDIA's DeepLearningExamples tables are one publisher whatever their
// frameworks); a file not listed is its own publisher (its name).
std::string CasePublisher(const std::string& file);
// The publishers of several files joined by '+' (sorted, each once): the source
// of an error that involves runs of more than one (PublishersOfSource splits it).
std::string JoinedPublishers(const std::vector<std::string>& files);

// The errors of the catalog predictions of a validation's modeled cases
// (ValidatedCase::predicted_sps; their devices were not calibrated on them),
// by ModelErrorClass. Cases the device was calibrated on are left out.
IntervalTable IntervalTableFromValidation(const ValidationReport& report);

// Adds the errors of transferred predictions (ValidateTransfer: each of B's
// cases predicted from A's, fitspeed/evidence/transfer.h) to table.transfer, by
// the target device's kind; the source joins B's case's publisher and A's runs'.
void AddTransferErrors(IntervalTable& table, const TransferValidation& transfer);

// Adds the errors of the framework profiles' predictions on held-out GPUs
// (FitFrameworkProfiles' computed folds: a GPU's runs predicted by the profile
// fitted on the framework's other GPUs) to table.framework, by the class of
// the held-out GPU and precision; the source is the case's publisher (the
// fold's profile was fitted on other publishers' runs only). Folds that could
// not be computed add nothing.
void AddFrameworkErrors(IntervalTable& table, const FrameworkProfileReport& report);

// Adds the errors of the modeled MLPerf cases of `mlperf` (ValidateMlperf of
// the development split: the test split's never enter) to table.classes, by
// the class of the device in mixed precision; each error's source is its
// publisher. Throws UsageError for a validation of the test split.
void AddMlperfErrors(IntervalTable& table, const MlperfValidation& mlperf);

// The table without any error that involves one of `publishers` (every map:
// classes, transfer, framework): what a leave-one-publisher-out test checks a
// publisher's cases against.
IntervalTable WithoutPublishers(const IntervalTable& table,
                                const std::vector<std::string>& publishers);

// Leave-one-publisher-out coverage of a class's intervals: each case's error
// against the interval For() builds from the table without any error that
// involves the case's publishers. Counted by case, and with publishers weighted
// equally (the mean over publishers of each one's share covered).
struct CoverageRow {
  std::string error_class;
  int cases = 0;          // cases of the class
  int with_interval = 0;  // of which an interval could be built without their source
  int covered = 0;        // of which the interval contained the error
  int below = 0;          // measured below the interval (the model too fast)
  int above = 0;          // measured above it
  double coverage() const { return with_interval > 0 ? double(covered) / with_interval : 0; }
  double median_width = 0;  // median of high_factor / low_factor over the intervals
  int publishers = 0;       // sources with a case that got an interval
  // Mean over those publishers of covered / with_interval (NaN: none).
  double publisher_coverage = 0;
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

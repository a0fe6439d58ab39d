// MLPerf Training ResNet-50 and BERT-large results of every submitter, rounds
// 3.0 to 5.0 (data/measured/mlperf_training_resnet_bert_throughput_v3.0-v5.0.csv,
// README there), as cases of the device step model, counted by publisher
// (data/publishers.json): `fitspeed validate mlperf` (docs/validation.md,
// "MLPerf Training ResNet-50 and BERT, every submitter").
//
//   fitspeed::PublisherTable publishers = fitspeed::ReadPublishers("data/publishers.json");
//   std::vector<fitspeed::MlperfCase> cases = fitspeed::ReadMlperfCases(table_path, publishers);
//   fitspeed::MlperfValidation v = fitspeed::ValidateMlperf(cases, {});  // development split
//
// Measurement only: the cases are predicted by the catalog as it is (Validate,
// fitspeed/evidence/validate.h), nothing is fitted to them.
#ifndef FITSPEED_EVIDENCE_MLPERF_H_
#define FITSPEED_EVIDENCE_MLPERF_H_

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/calibrate/cases.h"
#include "fitspeed/core/output_format.h"
#include "fitspeed/core/progress.h"

namespace fitspeed {

// ---- Publishers ----------------------------------------------------------------

// One organization whose harness produced runs, and the split it belongs to.
struct Publisher {
  std::string name;                            // "Dell", "Clemson University"
  std::vector<std::string> mlperf_submitters;  // MLPerf submitter folders ("Clemson")
  std::string split;                           // "development" or "test"
};

// data/publishers.json (schema "fitspeed.publishers/1").
struct PublisherTable {
  std::string rule;  // how publishers were split, as frozen
  std::vector<Publisher> publishers;
  // The publisher of each table of published cases, by file name ("case_files").
  std::map<std::string, std::string> case_files;
  // The publisher of an MLPerf submitter folder; nullptr when none lists it.
  const Publisher* OfSubmitter(const std::string& submitter) const;
  // The publisher of a case table (its path's last component looked up in
  // case_files); a file none lists is its own publisher, named by that name.
  std::string OfCaseFile(const std::string& file) const;
};

// Throws InputError when the file cannot be opened, DataError naming the file
// and the field on malformed JSON, another schema, a split other than
// development or test, or a submitter listed by two publishers.
PublisherTable ReadPublishers(const std::string& path);
// The same from text; `path` names it in errors.
PublisherTable ParsePublishers(const std::string& text, const std::string& path);
// data/publishers.json as compiled into the library.
const PublisherTable& BuiltinPublishers();

// ---- Cases ---------------------------------------------------------------------

// One distinct, successful, closed-division row of the table.
struct MlperfCase {
  std::string source;  // the table's file
  int line = 0;        // the row's 1-based line
  std::string round;   // "3.0" ... "5.0"
  std::string submitter;
  std::string publisher;  // PublisherTable::OfSubmitter(submitter)
  std::string split;      // the publisher's: "development" or "test"
  std::string system;
  std::string benchmark;    // "resnet" or "bert"
  std::string accelerator;  // as the table names it ("H100-SXM-80GB")
  // The catalog device it is (by name: "h100"), "" when none is mapped to it
  // (H100 SXM 96 GB, A40, CPUs; tinygrad's GeForce RTX 4090 and Radeon RX
  // 7900 XTX runs): not modelable.
  std::string device;
  int accelerators = 0;  // all nodes; 0 for a CPU-only system
  int accelerators_per_node = 0;
  int nodes = 0;
  int64_t global_batch = 0;  // samples (images, BERT sequences) per optimizer step
  double samples_per_s = 0;  // measured, all accelerators together
  // How samples_per_s was read (README): resnet_blocks_minus_eval,
  // resnet_epochs_minus_eval, bert_tracked_stats_interval_median,
  // bert_tracked_stats_run_average, bert_eval_diff_median.
  std::string method;
  std::string framework;  // the table's framework column
  std::string packing;    // bert_packing ("packed", "unpadded (unpad=True), not packed", ...)
  // BERT: sequences per 512-token row: the table's
  // GBS/(d_batch x n_acc x grad_acc) where its bert_packing_evidence gives it
  // (2 for packed runs: NVIDIA's packing holds about two sequences per row),
  // else 1. ResNet: 1.
  int sequences_per_row = 1;
  std::string flags;  // the table's flags column
  // The case the step model predicts (valid when device is set), with the
  // options of the assumptions in `note`. NVIDIA's BERT (padding removed):
  // global_batch sequences of the dataset's mean length, samples_per_s. The
  // other BERT code: rows of 512 tokens, global_batch / sequences_per_row of
  // them, samples_per_s / sequences_per_row.
  MeasuredCase measured;
};

// The table's name in data/measured.
inline constexpr const char* kMlperfResnetBertTable =
    "mlperf_training_resnet_bert_throughput_v3.0-v5.0.csv";

// Rows of the table left out, by why.
struct MlperfRowsLeftOut {
  int duplicates = 0;     // duplicate_of set: a re-publication of another row's run
  int open_division = 0;  // division open
  int unsuccessful = 0;   // n_ttt_success 0: no run reached the target
};

struct MlperfTable {
  std::vector<MlperfCase> cases;  // in file order
  MlperfRowsLeftOut left_out;
};

// Reads the table. Throws InputError when it cannot be opened, DataError(file,
// line, field) on a missing column, a submitter no publisher lists, a
// benchmark other than resnet or bert, a division other than closed or open,
// a count or throughput that is not a number > 0 (n_accelerators may be 0 for
// a CPU-only system), n_accelerators != accelerators_per_node x n_nodes, a
// BERT max_seq_len other than 512, or a global batch that the accelerators
// (and sequences_per_row) do not divide.
MlperfTable ReadMlperfCases(const std::string& path, const PublisherTable& publishers);

// ---- Validation ----------------------------------------------------------------

struct MlperfValidationOptions {
  // "development" (the default) or "test": the cases of that split alone; the
  // two are never pooled. The test split is reported once per release of the
  // model (data/publishers.json, "rule").
  std::string split = "development";
  double interval_level = 0.8;  // of the catalog interval each case is checked against, in (0, 1)
  ProgressCallback progress;    // told each case modeled (Validate's "cases" stage); may be empty
};

struct MlperfCaseResult {
  MlperfCase c;
  bool modeled = false;
  std::string reason;        // why not, when !modeled
  double predicted_sps = 0;  // samples (images, sequences) per second, all accelerators
  double error_pct = 0;      // PercentError(predicted_sps, c.samples_per_s)
  bool interval_available = false;
  std::string interval_reason;  // why not, when !interval_available
  std::string interval_basis;   // the class whose errors built it ("gpu/tensor", widened, ...)
  double low_sps = 0;           // predicted_sps x the interval's factors
  double high_sps = 0;
  bool covered = false;     // low_sps <= samples_per_s <= high_sps
  std::string memory_note;  // Validate's, when the memory model says the batch does not fit
};

struct MlperfPublisherSummary {
  std::string publisher;
  int cases = 0;                    // modeled
  int not_modeled = 0;              // rows of a catalog device that Validate did not model
  int not_modelable = 0;            // rows of an accelerator no catalog device is mapped to
  double median_abs_error_pct = 0;  // over its modeled cases; NaN when none
  int with_interval = 0;            // modeled cases with an interval
  double coverage = 0;              // share of those covered; NaN when none
};

// Accelerators (or reasons) whose rows were not predicted.
struct MlperfLeftOutGroup {
  std::string what;  // the accelerator as the table names it, or Validate's reason
  int cases = 0;
  std::vector<std::string> publishers;  // sorted
};

struct MlperfValidation {
  std::string split;
  double interval_level = 0.8;
  std::vector<MlperfCaseResult> cases;             // the split's rows, in file order
  std::vector<MlperfPublisherSummary> publishers;  // publishers with rows in the split, by name
  // Publishers weighted equally: the median over publishers with a modeled
  // case of their median |error|, and the coverage where each publisher's
  // cases with an interval weigh 1 together (the mean of their coverages).
  int publishers_modeled = 0;
  double median_of_publisher_medians_pct = 0;  // NaN when no publisher has a modeled case
  int publishers_with_interval = 0;
  double publisher_weighted_coverage = 0;  // NaN when none
  // For comparison, every modeled case weighted equally.
  int modeled_cases = 0;
  double median_abs_error_pct = 0;
  double case_coverage = 0;
  std::vector<MlperfLeftOutGroup> not_modelable;  // accelerators the catalog lacks
  std::vector<MlperfLeftOutGroup> not_modeled;    // catalog devices, by Validate's reason
  MlperfRowsLeftOut left_out;                     // rows of the whole table
  std::vector<std::string> assumptions;           // how a row became a case
};

// Predicts the split's cases with Validate (the catalog, no calibration) and
// checks each against the catalog's prediction interval at interval_level
// (BuiltinIntervalTable().For(device, mixed, level): what `fitspeed sweep
// --device` prints). Throws UsageError for a split other than development or
// test or a level outside (0, 1).
MlperfValidation ValidateMlperf(const MlperfTable& table,
                                const MlperfValidationOptions& options = {});

// Per case, per publisher, the summary, the rows not predicted and the
// assumptions (table); one row per case (csv); schema
// "fitspeed.validate_mlperf/1" (json).
void WriteMlperfValidation(std::ostream& out, const MlperfValidation& v, OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_MLPERF_H_

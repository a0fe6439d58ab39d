// Writers of the evidence reports, one per report type, as text tables, CSV
// or JSON (the output of `fitspeed validate` and its subcommands,
// docs/validation.md; `calibrate`'s and `sweep --from`'s are in
// fitspeed/calibrate/output.h).
// The JSON schemas are named in each.
#ifndef FITSPEED_EVIDENCE_OUTPUT_H_
#define FITSPEED_EVIDENCE_OUTPUT_H_

#include <ostream>

#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/calibrate/output.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/evidence/checks.h"
#include "fitspeed/evidence/layer_check.h"
#include "fitspeed/evidence/transfer.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/output.h"

namespace fitspeed {

// The published cases: per case, per device, per setup and workload, the
// cross-validation and cross-device folds, the mixed-precision ratios and the
// host self-check; then the transfer section (WriteTransferValidation) and,
// in the table, the interval coverage (WriteIntervalCoverage). CSV: one row
// per case, then the transfer's. JSON schema "fitspeed.validate/1" with the
// transfer and the intervals as fields.
void WriteCaseValidation(std::ostream& out, const CaseValidation& validation, OutputFormat format);

// The transfer check as a section of the cases report: table (per case, per
// fold, per pair and overall) or CSV (a '#' comment line, one row per
// predicted case, '#' summary lines); JSON: the "transfer" object of
// "fitspeed.validate/1".
void WriteTransferValidation(std::ostream& out, const TransferValidation& transfer,
                             OutputFormat format);

// The leave-one-source-out coverage of the prediction intervals at `level`
// (catalog predictions, and the transferred and framework-profile ones when
// the table has them) and the interval each class gets from all the data.
// Table: one table per kind of prediction after its heading; CSV: one row per
// kind of prediction and class; JSON: the "intervals" object of
// "fitspeed.validate/1".
void WriteIntervalCoverage(std::ostream& out, const IntervalTable& table, double level,
                           OutputFormat format);

// The kernel fits, their residuals per kind of kernel, the convolution
// algorithm's agreement, the second-source and all-reduce checks, the memory
// plateaus and the depthwise derivation. CSV: the fits only. JSON schema
// "fitspeed.kernel-fits/1".
void WriteKernelValidation(std::ostream& out, const KernelValidation& validation,
                           OutputFormat format);

// The per-layer check of a BERT encoder layer: per kind and the whole layer,
// per device and batch, the nodes not modeled and the device matches. CSV:
// one row per kind, layer and encoder layer. JSON schema
// "fitspeed.validate_layers/1".
void WriteLayerCheck(std::ostream& out, const LayerCheckReport& report, OutputFormat format);

// The Pollux placements: the one-node cases and their summaries, the 2- and
// 4-node predictions, the measured multi-node rows over the assumed and the
// calibrated link. CSV: one row per case, prediction and multi-node row and
// link. JSON schema "fitspeed.placements/1".
void WritePlacementValidation(std::ostream& out, const PlacementValidation& validation,
                              OutputFormat format);

// The framework profiles and their leave-one-GPU-out folds. CSV: the folds.
// JSON schema "fitspeed.validate_frameworks/1".
void WriteFrameworkValidation(std::ostream& out, const FrameworkValidation& validation,
                              OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_OUTPUT_H_

// Published runs of frameworks other than Megatron's, predicted by the split
// model under their framework profile (fitspeed/llm/framework.h) and, for
// comparison, under Megatron's (docs/validation.md, "Framework profiles of
// the split model"): development data, nothing fitted to them.
#ifndef FITSPEED_EVIDENCE_LLM_FRAMEWORK_ROWS_H_
#define FITSPEED_EVIDENCE_LLM_FRAMEWORK_ROWS_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace fitspeed {

// One row of data/measured/llm/fms_fsdp_a100.csv: a data-parallel run of one
// model on `accelerators` devices (tp = pp = cp = 1).
struct LlmFrameworkRow {
  std::string publisher;
  std::string source;  // the file
  int line = 0;        // the row's 1-based line
  std::string model;   // a built-in transformer or a short form (LoadTransformer)
  std::string device;  // a catalog device
  int accelerators = 0;
  std::string framework;    // LlmFrameworks()
  int zero = 0;             // 0..3
  int shard_group = 0;      // LlmSplit::shard_group (0: every rank)
  std::string recompute;    // none, selective, full
  int64_t micro_batch = 0;  // sequences per device
  int64_t seq_len = 0;
  double tokens_per_s_per_device = 0;  // measured
  std::string notes;
};

// DataError naming the file, line and field for a missing column, a bad
// number, an unknown framework or recomputation, zero outside 0..3.
std::vector<LlmFrameworkRow> ReadLlmFrameworkRows(const std::string& path);

struct LlmFrameworkRowResult {
  LlmFrameworkRow row;
  double predicted = 0;           // tokens/s a device under the row's framework
  double predicted_megatron = 0;  // the same split under Megatron's profile
  // ln(measured / predicted) of each.
  double log_ratio = 0, log_ratio_megatron = 0;
};

// Each row modeled as a user would (the row's split, fitspeed's defaults
// otherwise, the device's calibration: LlmCalibrationFor).
std::vector<LlmFrameworkRowResult> ValidateLlmFrameworkRows(
    const std::vector<LlmFrameworkRow>& rows);

// A table: each row's measured and predicted tokens/s a device and the
// errors, then the median |error| under each profile.
void WriteLlmFrameworkRows(std::ostream& out, const std::vector<LlmFrameworkRowResult>& results);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_LLM_FRAMEWORK_ROWS_H_

// Framework rows against the split model (fitspeed/evidence/llm_framework_rows.h).
#include "fitspeed/evidence/llm_framework_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/median.h"
#include "core/table.h"
#include "evidence/csv_table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/framework.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"

namespace fitspeed {

std::vector<LlmFrameworkRow> ReadLlmFrameworkRows(const std::string& path) {
  const CsvTable t = ReadCsvTable(
      path, {"publisher", "model", "device", "accelerators", "framework", "zero", "shard_group",
             "recompute", "micro_batch", "seq_len", "tokens_per_s_per_device", "notes"});
  std::vector<LlmFrameworkRow> rows;
  for (const CsvTable::Row& r : t.rows) {
    LlmFrameworkRow row;
    row.source = path;
    row.line = r.line;
    row.publisher = t.Get(r, "publisher");
    row.model = t.Get(r, "model");
    row.device = t.Get(r, "device");
    row.accelerators = static_cast<int>(std::min<int64_t>(t.PositiveInt(r, "accelerators"), 65536));
    row.framework = t.Get(r, "framework");
    row.zero = static_cast<int>(std::min(t.NonNegative(r, "zero"), 4.0));
    row.shard_group = static_cast<int>(std::min(t.NonNegative(r, "shard_group"), 65536.0));
    row.recompute = t.Get(r, "recompute");
    row.micro_batch = t.PositiveInt(r, "micro_batch");
    row.seq_len = t.PositiveInt(r, "seq_len");
    row.tokens_per_s_per_device = t.Positive(r, "tokens_per_s_per_device");
    row.notes = t.Get(r, "notes");
    try {
      FindLlmFramework(row.framework);
    } catch (const UsageError& e) {
      throw DataError(path, r.line, "framework", e.what());
    }
    try {
      ParseRecompute(row.recompute);
    } catch (const UsageError& e) {
      throw DataError(path, r.line, "recompute", e.what());
    }
    if (row.zero > 3 || t.NonNegative(r, "zero") != row.zero)
      throw DataError(path, r.line, "zero", "expected 0, 1, 2 or 3");
    if (t.NonNegative(r, "shard_group") != row.shard_group)
      throw DataError(path, r.line, "shard_group", "expected a whole number of ranks (0: all)");
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// Tokens/s a device of `row`'s split under `framework`.
double PredictedFrameworkRow(const LlmFrameworkRow& row, const std::string& framework) {
  const TransformerConfig model = LoadTransformer(row.model);
  const LlmCluster cluster = MakeCluster(LoadDevice(row.device), row.accelerators);
  const LlmTraining training = MakeLlmTraining(row.seq_len, "bf16", 0, true, 0, framework);
  LlmSplit s;
  s.dp = row.accelerators;
  s.micro_batch = row.micro_batch;
  s.global_batch = row.micro_batch * row.accelerators;
  s.zero = row.zero;
  s.shard_group = row.shard_group;
  s.recompute = ParseRecompute(row.recompute);
  const LlmStep step = ModelLlmStep(model, cluster, training, s, LlmCalibrationFor(cluster.device));
  return step.tokens_per_s / row.accelerators;
}

}  // namespace

std::vector<LlmFrameworkRowResult> ValidateLlmFrameworkRows(
    const std::vector<LlmFrameworkRow>& rows) {
  std::vector<LlmFrameworkRowResult> out;
  for (const LlmFrameworkRow& row : rows) {
    LlmFrameworkRowResult r;
    r.row = row;
    r.predicted = PredictedFrameworkRow(row, row.framework);
    r.predicted_megatron = PredictedFrameworkRow(row, "megatron");
    r.log_ratio = std::log(row.tokens_per_s_per_device / r.predicted);
    r.log_ratio_megatron = std::log(row.tokens_per_s_per_device / r.predicted_megatron);
    out.push_back(r);
  }
  return out;
}

void WriteLlmFrameworkRows(std::ostream& out, const std::vector<LlmFrameworkRowResult>& results) {
  out << "Frameworks other than Megatron's (development data, nothing fitted to them): each run "
         "predicted under its framework's profile and under megatron's; error = predicted / "
         "measured - 1\n";
  TextTable t({"publisher", "model", "devices", "framework", "zero", "shard", "recompute", "mb",
               "measured tok/s/dev", "predicted", "error", "as megatron", "error"});
  std::vector<double> own, megatron;
  for (const LlmFrameworkRowResult& r : results) {
    const LlmFrameworkRow& row = r.row;
    const std::string model = row.model.size() > 24 ? row.model.substr(0, 21) + "..." : row.model;
    t.AddRow({row.publisher, model, fmt::format("{} {}", row.accelerators, row.device),
              row.framework, std::to_string(row.zero),
              row.shard_group > 0 ? std::to_string(row.shard_group) : std::string("all"),
              row.recompute, std::to_string(row.micro_batch),
              fmt::format("{:.0f}", row.tokens_per_s_per_device),
              fmt::format("{:.0f}", r.predicted),
              fmt::format("{:+.1f}%", 100 * std::expm1(-r.log_ratio)),
              fmt::format("{:.0f}", r.predicted_megatron),
              fmt::format("{:+.1f}%", 100 * std::expm1(-r.log_ratio_megatron))});
    own.push_back(std::fabs(std::expm1(-r.log_ratio)));
    megatron.push_back(std::fabs(std::expm1(-r.log_ratio_megatron)));
  }
  out << t.Render();
  if (!results.empty()) {
    out << fmt::format(
        "median |error|: {:.1f}% under each run's framework, {:.1f}% under megatron's "
        "({} rows)\n",
        100 * Median(own), 100 * Median(megatron), results.size());
  }
}

}  // namespace fitspeed

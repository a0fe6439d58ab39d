// Projections from koshian2/TPU-Benchmark's per-epoch times against the
// author's own summary (before_training, first_epoch, second_epoch_mean,
// second_epoch_sd, total_second; tests/data/measured, see its README). The
// author projects E epochs as before_training + first_epoch + (E-1)*second_epoch_mean.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "fitspeed/io/input.h"
#include "fitspeed/project/epochs.h"
#include "io/text.h"

namespace fitspeed {
namespace {

const std::string kDir = std::string(FITSPEED_TEST_DATA_DIR) + "/measured/";

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// (device, batch, use_validation, use_augmentation, from_storage, num_workers),
// booleans lower-cased ("TRUE" in the summary, "True" in the per-epoch file).
using Key = std::tuple<std::string, int, std::string, std::string, std::string, int>;

struct Summary {
  double before_training, first_epoch, second_epoch_mean, second_epoch_sd, total_second;
};

// A CSV without quotes, read with the header's column names.
std::vector<std::map<std::string, std::string>> ReadTable(const std::string& path) {
  const std::string text = ReadFile(path);
  io::LineCursor cursor(text);
  std::string_view line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  while (cursor.Next(line)) {
    if (io::Trim(line).empty()) continue;
    const std::vector<std::string> cells = io::Split(line, ',');
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

Key KeyOf(const std::map<std::string, std::string>& row) {
  return {row.at("device"),
          std::stoi(row.at("batch_size")),
          io::ToLower(row.at("use_validation")),
          io::ToLower(row.at("use_augmentation")),
          io::ToLower(row.at("from_storage")),
          std::stoi(row.at("num_workers"))};
}

std::map<Key, Summary> ReadSummary() {
  std::map<Key, Summary> summary;
  for (const auto& row : ReadTable(kDir + "koshian2_tpu_benchmark_result_summary.csv")) {
    summary[KeyOf(row)] = {std::stod(row.at("before_training")), std::stod(row.at("first_epoch")),
                           std::stod(row.at("second_epoch_mean")),
                           std::stod(row.at("second_epoch_sd")), std::stod(row.at("total_second"))};
  }
  return summary;
}

// Epoch logs straight from the per-epoch file, startup from initial_time_s.
std::map<Key, EpochLog> ReadLogs() {
  std::map<Key, EpochLog> logs;
  for (const auto& row : ReadTable(kDir + "koshian2_tpu_benchmark_main_per_epoch.csv")) {
    EpochLog& log = logs[KeyOf(row)];
    EXPECT_EQ(std::stoi(row.at("epoch")), static_cast<int>(log.epoch_times_s.size()) + 1);
    log.epoch_times_s.push_back(std::stod(row.at("epoch_time_s")));
    log.startup_s = std::stod(row.at("initial_time_s"));
    log.batch = std::stoi(row.at("batch_size"));
    log.label = row.at("device");
  }
  return logs;
}

TEST(Koshian2, MeasuredEpochModelsReproduceTheAuthorsSummary) {
  const std::map<Key, Summary> summary = ReadSummary();
  const std::map<Key, EpochLog> logs = ReadLogs();
  ASSERT_EQ(logs.size(), 80u);  // 80 configurations x 20 epochs
  ASSERT_EQ(summary.size(), 80u);
  for (const auto& [key, log] : logs) {
    SCOPED_TRACE(::testing::PrintToString(key));
    ASSERT_EQ(log.epoch_times_s.size(), 20u);
    ASSERT_EQ(summary.count(key), 1u);
    const Summary& s = summary.at(key);
    const EpochModel m = EpochModelFromLog(log);
    // The summary rounds to 0.1 s.
    EXPECT_NEAR(m.startup_s, s.before_training, 0.05 + 1e-9);
    EXPECT_NEAR(m.epoch_s + m.first_epoch_extra_s, s.first_epoch, 0.05 + 1e-9);
    EXPECT_NEAR(m.epoch_s, s.second_epoch_mean, 0.05 + 1e-9);
    // The author's sd is numpy's default, the population sd (ddof = 0); ours is
    // the sample sd (n - 1 = 18 for 19 steady epochs).
    EXPECT_NEAR(m.epoch_sd_s * std::sqrt(18.0 / 19.0), s.second_epoch_sd, 0.05 + 1e-9);
    // The run itself, 20 epochs: the summary's 0.1 s rounding plus the per-epoch
    // file's 1 ms rounding of 21 times (21 * 0.0005 s).
    EXPECT_NEAR(m.Total(20), s.total_second, 0.05 + 0.0105 + 1e-6);
  }
}

TEST(Koshian2, ProjectionsMatchTheAuthorsFormula) {
  // before_training + first_epoch + (E-1)*second_epoch_mean from the summary's
  // rounded numbers: each may be off by 0.05, so E epochs by 0.05*(E+1).
  const std::map<Key, Summary> summary = ReadSummary();
  std::vector<EpochModel> models;
  std::vector<Key> keys;
  for (const auto& [key, log] : ReadLogs()) {
    models.push_back(EpochModelFromLog(log));
    keys.push_back(key);
  }
  ProjectOptions options;  // the default epochs 10 ... 2000
  const std::vector<ProjectionRow> rows = ProjectTotals(models, options);
  ASSERT_EQ(rows.size(), models.size() * 8);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Summary& s = summary.at(keys[i / 8]);
    const double e = rows[i].epochs;
    const double by_hand = s.before_training + s.first_epoch + (e - 1) * s.second_epoch_mean;
    EXPECT_NEAR(rows[i].total_s, by_hand, 0.05 * (e + 1) + 1e-6)
        << ::testing::PrintToString(keys[i / 8]) << " E=" << e;
    // 20 steady epochs of spread: a 95% interval exists and holds the total.
    ASSERT_TRUE(rows[i].ci_low_s.has_value());
    EXPECT_LT(*rows[i].ci_low_s, rows[i].total_s);
    EXPECT_GT(*rows[i].ci_high_s, rows[i].total_s);
  }
}

TEST(Koshian2, ReaderPathGivesTheSameEpochs) {
  // Through the CSV reader with every epoch kept (skip 0) and the epoch's
  // samples given on the command line: same first epoch and steady epoch.
  InputSpec spec = ParseInputSpec(kDir + "koshian2_tpu_benchmark_main_per_epoch.csv@samples=50000");
  ReadOptions read;
  read.skip_first_epochs = 0;
  const std::vector<EpochLog> logs = EpochLogsFromSamples(ReadSamples(spec, read));
  ASSERT_EQ(logs.size(), 80u);
  const std::map<Key, Summary> summary = ReadSummary();
  int matched = 0;
  for (const EpochLog& log : logs) {
    ASSERT_EQ(log.epoch_times_s.size(), 20u) << log.label;
    const EpochModel m = EpochModelFromLog(log);
    // The label carries the series keys: find the summary row by its values.
    for (const auto& [key, s] : summary) {
      const auto& [device, batch, validation, augmentation, storage, workers] = key;
      const std::string label = io::ToLower(log.label);
      if (batch != log.batch || label.find("device=" + device) == std::string::npos ||
          label.find("use_validation=" + validation) == std::string::npos ||
          label.find("use_augmentation=" + augmentation) == std::string::npos ||
          label.find("from_storage=" + storage) == std::string::npos ||
          label.find("num_workers=" + std::to_string(workers)) == std::string::npos) {
        continue;
      }
      ++matched;
      EXPECT_NEAR(m.epoch_s + m.first_epoch_extra_s, s.first_epoch, 0.05 + 1e-9) << log.label;
      EXPECT_NEAR(m.epoch_s, s.second_epoch_mean, 0.05 + 1e-9) << log.label;
    }
  }
  EXPECT_EQ(matched, 80);
}

}  // namespace
}  // namespace fitspeed

// Building and testing the prediction-interval table (interval_table.h).
#include "fitspeed/evidence/interval_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "core/median.h"
#include "fitspeed/core/error.h"
#include "fitspeed/evidence/mlperf.h"

namespace fitspeed {

namespace {

using ErrorClasses = std::map<std::string, std::vector<ModelError>>;

// The errors that involve none of `publishers`.
std::vector<ModelError> WithoutPublishersTable(const std::vector<ModelError>& errors,
                                               const std::vector<std::string>& publishers) {
  std::vector<ModelError> kept;
  for (const ModelError& e : errors) {
    bool involved = false;
    for (const std::string& p : PublishersOfSource(e.source)) {
      involved = involved || std::find(publishers.begin(), publishers.end(), p) != publishers.end();
    }
    if (!involved) kept.push_back(e);
  }
  return kept;
}

// One of IntervalTable's error maps (classes, transfer, framework), and the
// lookup that reads it (For, ForTransfer, ForFramework).
using ErrorMap = ErrorClasses IntervalTable::*;
using Lookup = PredictionInterval (IntervalTable::*)(const std::string&, double) const;

// Each error of `table.*map` against the interval `lookup` gives its class
// from a table without the error's source.
CoverageReport Coverage(const IntervalTable& table, ErrorMap map, Lookup lookup, double level) {
  const ErrorClasses& classes = table.*map;
  if (!(level > 0 && level < 1)) {
    throw UsageError(fmt::format("interval level must be in (0, 1), got {}", level));
  }
  CoverageReport report;
  report.level = level;
  report.overall.error_class = "all";
  std::vector<double> all_widths;
  // Per source (publisher): cases with an interval, and covered ones.
  PublisherCoverageTally all_tally;
  auto weighted = [](const PublisherCoverageTally& tally, CoverageRow& row) {
    row.publishers = tally.Publishers();
    row.publisher_coverage = tally.Coverage();
  };
  for (const auto& [name, errors] : classes) {
    CoverageRow row;
    row.error_class = name;
    std::vector<double> widths;
    PublisherCoverageTally tally;
    for (const ModelError& e : errors) {
      ++row.cases;
      // The table as it would be without this case's publishers.
      const std::vector<std::string> publishers = PublishersOfSource(e.source);
      ErrorClasses held_out;
      for (const auto& [other, other_errors] : classes) {
        held_out[other] = WithoutPublishersTable(other_errors, publishers);
      }
      IntervalTable held_out_table;
      held_out_table.*map = std::move(held_out);
      const PredictionInterval interval = (held_out_table.*lookup)(name, level);
      if (!interval.available) continue;
      ++row.with_interval;
      widths.push_back(interval.high_factor / interval.low_factor);
      const double low = std::log(interval.low_factor), high = std::log(interval.high_factor);
      const bool covered = e.log_ratio >= low && e.log_ratio <= high;
      if (e.log_ratio < low) {
        ++row.below;
      } else if (e.log_ratio > high) {
        ++row.above;
      } else {
        ++row.covered;
      }
      tally.Add(e.source, covered);
      all_tally.Add(e.source, covered);
    }
    weighted(tally, row);
    row.median_width = widths.empty() ? std::nan("") : Median(widths);
    all_widths.insert(all_widths.end(), widths.begin(), widths.end());
    report.overall.cases += row.cases;
    report.overall.with_interval += row.with_interval;
    report.overall.covered += row.covered;
    report.overall.below += row.below;
    report.overall.above += row.above;
    report.classes.push_back(row);
  }
  report.overall.median_width = all_widths.empty() ? std::nan("") : Median(all_widths);
  weighted(all_tally, report.overall);
  return report;
}

}  // namespace

namespace {

// The catalog devices of one pass over cases, each loaded (parsed) once.
class DevicesOfCases {
 public:
  const Device& Get(const std::string& name) {
    auto it = devices_.find(name);
    if (it == devices_.end()) it = devices_.emplace(name, LoadDevice(name)).first;
    return it->second;
  }

 private:
  std::map<std::string, Device> devices_;
};

}  // namespace

std::string CasePublisher(const std::string& file) { return BuiltinPublishers().OfCaseFile(file); }

std::string JoinedPublishers(const std::vector<std::string>& files) {
  std::set<std::string> names;
  for (const std::string& f : files) names.insert(CasePublisher(f));
  return fmt::format("{}", fmt::join(names, "+"));
}

IntervalTable IntervalTableFromValidation(const ValidationReport& report) {
  IntervalTable table;
  DevicesOfCases devices;
  for (const ValidatedCase& v : report.cases) {
    if (!v.modeled || v.in_sample) continue;
    const Device& device = devices.Get(v.measured.device);
    ModelError e;
    e.source = CasePublisher(v.measured.source);
    e.case_key = fmt::format("{}@{}", v.key, v.measured.line);
    e.log_ratio = std::log(v.measured.throughput_sps / v.predicted_sps);
    table.classes[ModelErrorClass(device, v.measured.precision)].push_back(std::move(e));
  }
  return table;
}

void AddTransferErrors(IntervalTable& table, const TransferValidation& transfer) {
  DevicesOfCases devices;
  for (const TransferredCase& c : transfer.cases) {
    ModelError e;
    // The target's publisher and the calibrated runs' (the two differ for a
    // transfer across publishers: leaving either out drops the error).
    std::vector<std::string> files = c.from_sources;
    files.push_back(c.source);
    e.source = JoinedPublishers(files);
    e.case_key = fmt::format("{} {}@{}", c.pair, c.key, c.line);
    e.log_ratio = c.log_ratio;
    table.transfer[devices.Get(c.target_device).kind].push_back(std::move(e));
  }
}

void AddFrameworkErrors(IntervalTable& table, const FrameworkProfileReport& report) {
  DevicesOfCases devices;
  for (const FrameworkFold& fold : report.folds) {
    if (!fold.computed) continue;
    const Device& device = devices.Get(fold.device);
    for (size_t i = 0; i < fold.held_out.size() && i < fold.profile_errors.size(); ++i) {
      const MeasuredCase& c = fold.held_out[i];
      ModelError e;
      e.source = CasePublisher(c.source);
      e.case_key = fmt::format("{} profile from {}: {}@{}", c.framework,
                               fmt::join(fold.training_devices, "+"), CaseKey(c), c.line);
      // profile_errors are predicted / measured - 1.
      e.log_ratio = -std::log1p(fold.profile_errors[i]);
      table.framework[ModelErrorClass(device, c.precision)].push_back(std::move(e));
    }
  }
}

void AddMlperfErrors(IntervalTable& table, const MlperfValidation& mlperf) {
  if (mlperf.split != "development") {
    throw UsageError(
        fmt::format("the MLPerf {} split never enters the interval table (data/publishers.json)",
                    mlperf.split));
  }
  DevicesOfCases devices;
  for (const MlperfCaseResult& r : mlperf.cases) {
    if (!r.modeled) continue;
    const Device& device = devices.Get(r.c.device);
    ModelError e;
    e.source = r.c.publisher;
    e.case_key = fmt::format("{}@{}", CaseKey(r.c.measured), r.c.line);
    e.log_ratio = std::log(r.c.samples_per_s / r.predicted_sps);
    table.classes[ModelErrorClass(device, r.c.measured.precision)].push_back(std::move(e));
  }
}

IntervalTable WithoutPublishers(const IntervalTable& table,
                                const std::vector<std::string>& publishers) {
  IntervalTable held_out = table;
  for (ErrorClasses* map : {&held_out.classes, &held_out.transfer, &held_out.framework}) {
    for (auto& [name, errors] : *map) errors = WithoutPublishersTable(errors, publishers);
  }
  return held_out;
}

CoverageReport LeaveOneSourceOutCoverage(const IntervalTable& table, double level) {
  return Coverage(table, &IntervalTable::classes, static_cast<Lookup>(&IntervalTable::For), level);
}

CoverageReport LeaveOneSourceOutTransferCoverage(const IntervalTable& table, double level) {
  // Transfer errors have no coarser class: each kind stands alone.
  return Coverage(table, &IntervalTable::transfer, &IntervalTable::ForTransfer, level);
}

CoverageReport LeaveOneSourceOutFrameworkCoverage(const IntervalTable& table, double level) {
  return Coverage(table, &IntervalTable::framework,
                  static_cast<Lookup>(&IntervalTable::ForFramework), level);
}

}  // namespace fitspeed

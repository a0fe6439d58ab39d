// `fitspeed validate mlperf`: the MLPerf ResNet-50/BERT cases predicted by the
// catalog and summarised with publishers weighted equally
// (fitspeed/evidence/mlperf.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/median.h"
#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/core/error.h"
#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/evidence/interval_table.h"
#include "fitspeed/evidence/mlperf.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {

namespace {

constexpr double kNanMlperf = std::numeric_limits<double>::quiet_NaN();

double MedianOrNanMlperf(const std::vector<double>& values) {
  return values.empty() ? kNanMlperf : Median(values);
}

// Rows grouped by `what`, with their publishers, in the order of `what`.
void AddToGroupMlperf(std::vector<MlperfLeftOutGroup>& groups, const std::string& what,
                      const std::string& publisher) {
  auto it = std::find_if(groups.begin(), groups.end(),
                         [&](const MlperfLeftOutGroup& g) { return g.what == what; });
  if (it == groups.end()) {
    groups.push_back({what, 0, {}});
    it = std::prev(groups.end());
  }
  ++it->cases;
  if (std::find(it->publishers.begin(), it->publishers.end(), publisher) == it->publishers.end()) {
    it->publishers.push_back(publisher);
    std::sort(it->publishers.begin(), it->publishers.end());
  }
}

// The reason Validate gives, without the numbers that differ per case: "device
// h100 has no network link between nodes" for every multi-node H100 run.
std::string ReasonGroupMlperf(const std::string& reason) {
  const size_t colon = reason.find(": device ");
  const std::string tail = colon == std::string::npos ? reason : reason.substr(colon + 2);
  return tail.substr(0, tail.find(';'));
}

const std::vector<std::string>& AssumptionsMlperf() {
  static const std::vector<std::string> assumptions = {
      "rows: distinct (duplicate_of empty), closed division, at least one run reached the target "
      "(n_ttt_success > 0); measured = the table's samples_per_s (median over the system's result "
      "files, timed region less evaluation)",
      "precision mixed (FP16/BF16 AMP) for every row but NVIDIA's packed BERT on an FP8 device, "
      "which runs its dense layers and attention in FP8 (--use_transformer_engine2 in every "
      "packed config); the catalog device of each accelerator by "
      "name (A100 SXM 40 GB a100, SXM 80 GB a100-80gb, PCIe 80 GB a100-pcie-80gb; H100 SXM h100, "
      "PCIe h100-pcie; tinygrad's GeForce RTX 4090 and Radeon RX 7900 XTX runs not mapped)",
      "devices = n_accelerators, accelerators_per_node per node (more than one node: the "
      "catalog device's network link; a device without one is not modeled); per-device batch = "
      "global_batch / n_accelerators; no gradient accumulation",
      "ResNet-50 on NVIDIA GPUs: NVIDIA's MXNet reference (NHWC, DALI, cuDNN's fused "
      "BN-ReLU-add): --layout nhwc --fuse bn-relu-add; on Gaudi2: layout and fusion not stated "
      "(nchw, none); LARS modeled as momentum SGD",
      "BERT-large: the zoo's bert-large, max sequence 512; a sample is one sequence; NVIDIA's "
      "code (every GPU row) removes the padding: a sequence of the dataset's mean 254.43 real "
      "tokens (NVIDIA's packing README, training_results_v3.1), attention at the mean square "
      "4/3 x 254.43^2 (assumed: not published), the masked-LM head on 38 positions (15% of "
      "the mean), --attention fused, the model cast to FP16 whole (--amp-ops none), FP8 "
      "when packed on an FP8 device (--precision fp8) (--mean-tokens 254.43 "
      "--mean-square-tokens 86312 --head-positions 38); other code: rows of 512 tokens, a packed "
      "row holding the table's "
      "GBS/(d_batch*n_acc*grad_acc) sequences, else one sequence padded to 512; LAMB modeled "
      "as Adam",
      "interval: the catalog's prediction interval at the level given (what `fitspeed sweep "
      "--device D` prints at the case's precision), covering when measured lies inside it",
  };
  return assumptions;
}

}  // namespace

MlperfValidation ValidateMlperf(const MlperfTable& table, const MlperfValidationOptions& options) {
  if (options.split != "development" && options.split != "test") {
    throw UsageError(fmt::format("split '{}': expected development or test", options.split));
  }
  if (!(options.interval_level > 0 && options.interval_level < 1)) {
    throw UsageError(
        fmt::format("interval_level {}: expected a number in (0, 1)", options.interval_level));
  }
  MlperfValidation v;
  v.split = options.split;
  v.interval_level = options.interval_level;
  v.left_out = table.left_out;
  v.assumptions = AssumptionsMlperf();

  // The split's rows; those of a catalog device are predicted together.
  std::vector<MeasuredCase> measured;
  for (const MlperfCase& c : table.cases) {
    if (c.split != options.split) continue;
    MlperfCaseResult r;
    r.c = c;
    if (c.device.empty()) {
      r.reason = "not modelable: no catalog device is mapped to " + c.accelerator;
    } else {
      measured.push_back(c.measured);
    }
    v.cases.push_back(std::move(r));
  }
  ValidateOptions validate;
  validate.progress = options.progress;
  const ValidationReport report = Validate(measured, validate);

  std::map<std::string, std::unique_ptr<Device>> devices;
  std::map<std::string, IntervalTable> held_out;  // the built-in table without a publisher
  size_t next = 0;
  for (MlperfCaseResult& r : v.cases) {
    if (r.c.device.empty()) {
      AddToGroupMlperf(v.not_modelable, r.c.accelerator, r.c.publisher);
      continue;
    }
    const ValidatedCase& vc = report.cases[next++];
    if (!vc.modeled) {
      r.reason = vc.reason;
      AddToGroupMlperf(v.not_modeled, r.c.device + ": " + ReasonGroupMlperf(vc.reason),
                       r.c.publisher);
      continue;
    }
    r.modeled = true;
    r.memory_note = vc.memory_note;
    // The model predicts its samples: sequences (NVIDIA's unpadded BERT,
    // ResNet's images) or rows of sequences_per_row sequences (the other BERT
    // code); measured / modeled throughput is the samples per modeled one.
    r.predicted_sps = vc.predicted_sps * (r.c.samples_per_s / r.c.measured.throughput_sps);
    r.error_pct = PercentError(r.predicted_sps, r.c.samples_per_s);
    std::unique_ptr<Device>& device = devices[r.c.device];
    if (!device) device = std::make_unique<Device>(LoadDevice(r.c.device));
    // The development split's errors are in the built-in table: each case is
    // checked against the table without its publisher's (leave one publisher
    // out); the test split's never are, so it takes the table as printed.
    const IntervalTable* table = &BuiltinIntervalTable();
    if (options.split == "development") {
      auto it = held_out.find(r.c.publisher);
      if (it == held_out.end()) {
        it = held_out.emplace(r.c.publisher, WithoutPublishers(*table, {r.c.publisher})).first;
      }
      table = &it->second;
    }
    const PredictionInterval interval =
        table->For(*device, r.c.measured.precision, options.interval_level);
    r.interval_available = interval.available;
    if (!interval.available) {
      r.interval_reason = interval.reason;
      continue;
    }
    r.interval_basis = interval.basis;
    r.low_sps = r.predicted_sps * interval.low_factor;
    r.high_sps = r.predicted_sps * interval.high_factor;
    r.covered = r.low_sps <= r.c.samples_per_s && r.c.samples_per_s <= r.high_sps;
  }
  std::sort(v.not_modelable.begin(), v.not_modelable.end(),
            [](const auto& a, const auto& b) { return a.what < b.what; });
  std::sort(v.not_modeled.begin(), v.not_modeled.end(),
            [](const auto& a, const auto& b) { return a.what < b.what; });

  // Per publisher, then publishers weighted equally.
  std::map<std::string, std::vector<const MlperfCaseResult*>> by_publisher;
  for (const MlperfCaseResult& r : v.cases) by_publisher[r.c.publisher].push_back(&r);
  std::vector<double> publisher_medians, all_errors;
  int all_covered = 0, all_with_interval = 0;
  PublisherCoverageTally coverage;
  for (const auto& [name, rows] : by_publisher) {
    MlperfPublisherSummary p;
    p.publisher = name;
    std::vector<double> errors;
    int covered = 0;
    for (const MlperfCaseResult* r : rows) {
      if (r->c.device.empty()) {
        ++p.not_modelable;
      } else if (!r->modeled) {
        ++p.not_modeled;
      } else {
        errors.push_back(std::fabs(r->error_pct));
        if (r->interval_available) {
          ++p.with_interval;
          covered += r->covered ? 1 : 0;
          coverage.Add(name, r->covered);
        }
      }
    }
    p.cases = static_cast<int>(errors.size());
    p.median_abs_error_pct = MedianOrNanMlperf(errors);
    p.coverage = p.with_interval > 0 ? static_cast<double>(covered) / p.with_interval : kNanMlperf;
    if (p.cases > 0) publisher_medians.push_back(p.median_abs_error_pct);
    all_errors.insert(all_errors.end(), errors.begin(), errors.end());
    all_covered += covered;
    all_with_interval += p.with_interval;
    v.publishers.push_back(std::move(p));
  }
  v.publishers_modeled = static_cast<int>(publisher_medians.size());
  v.median_of_publisher_medians_pct = MedianOrNanMlperf(publisher_medians);
  v.publishers_with_interval = coverage.Publishers();
  v.publisher_weighted_coverage = coverage.Coverage();
  v.modeled_cases = static_cast<int>(all_errors.size());
  v.median_abs_error_pct = MedianOrNanMlperf(all_errors);
  v.case_coverage =
      all_with_interval > 0 ? static_cast<double>(all_covered) / all_with_interval : kNanMlperf;
  return v;
}

// ---- Output --------------------------------------------------------------------

namespace {

using evidence_output::Number;
using evidence_output::PercentCell;
using evidence_output::SignedPercentCell;

std::string SpsCellMlperf(double sps) { return fmt::format("{:.0f}", sps); }

std::string IntervalCellMlperf(const MlperfCaseResult& r) {
  if (!r.modeled) return "-";
  if (!r.interval_available) return "none";
  return fmt::format("{:.0f}-{:.0f}", r.low_sps, r.high_sps);
}

std::string GroupLineMlperf(const MlperfLeftOutGroup& g) {
  std::string names;
  for (const std::string& p : g.publishers) names += (names.empty() ? "" : ", ") + p;
  return fmt::format("  {}: {} case{}, {} publisher{} ({})\n", g.what, g.cases,
                     g.cases == 1 ? "" : "s", g.publishers.size(),
                     g.publishers.size() == 1 ? "" : "s", names);
}

nlohmann::ordered_json GroupsJsonMlperf(const std::vector<MlperfLeftOutGroup>& groups) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const MlperfLeftOutGroup& g : groups) {
    j.push_back({{"what", g.what}, {"cases", g.cases}, {"publishers", g.publishers}});
  }
  return j;
}

void WriteJsonMlperf(std::ostream& out, const MlperfValidation& v) {
  nlohmann::ordered_json j;
  j["schema"] = "fitspeed.validate_mlperf/1";
  j["split"] = v.split;
  j["interval_level"] = v.interval_level;
  j["summary"] = {
      {"publishers", v.publishers_modeled},
      {"median_of_publisher_median_abs_error_pct", Number(v.median_of_publisher_medians_pct)},
      {"publishers_with_interval", v.publishers_with_interval},
      {"publisher_weighted_coverage", Number(v.publisher_weighted_coverage)},
      {"cases", v.modeled_cases},
      {"case_median_abs_error_pct", Number(v.median_abs_error_pct)},
      {"case_coverage", Number(v.case_coverage)}};
  j["publishers"] = nlohmann::ordered_json::array();
  for (const MlperfPublisherSummary& p : v.publishers) {
    j["publishers"].push_back({{"publisher", p.publisher},
                               {"cases", p.cases},
                               {"not_modeled", p.not_modeled},
                               {"not_modelable", p.not_modelable},
                               {"median_abs_error_pct", Number(p.median_abs_error_pct)},
                               {"with_interval", p.with_interval},
                               {"coverage", Number(p.coverage)}});
  }
  j["cases"] = nlohmann::ordered_json::array();
  for (const MlperfCaseResult& r : v.cases) {
    const MlperfCase& c = r.c;
    nlohmann::ordered_json row = {{"source", c.source},
                                  {"line", c.line},
                                  {"round", c.round},
                                  {"publisher", c.publisher},
                                  {"submitter", c.submitter},
                                  {"system", c.system},
                                  {"benchmark", c.benchmark},
                                  {"accelerator", c.accelerator},
                                  {"device", c.device},
                                  {"devices", c.accelerators},
                                  {"devices_per_node", c.accelerators_per_node},
                                  {"global_batch", c.global_batch},
                                  {"sequences_per_row", c.sequences_per_row},
                                  {"measured_sps", c.samples_per_s},
                                  {"modeled", r.modeled}};
    if (r.modeled) {
      row["predicted_sps"] = r.predicted_sps;
      row["error_pct"] = r.error_pct;
      row["interval_available"] = r.interval_available;
      if (r.interval_available) {
        row["interval_low_sps"] = r.low_sps;
        row["interval_high_sps"] = r.high_sps;
        row["interval_basis"] = r.interval_basis;
        row["covered"] = r.covered;
      } else {
        row["interval_reason"] = r.interval_reason;
      }
      if (!r.memory_note.empty()) row["memory_note"] = r.memory_note;
      row["assumed"] = c.measured.note;
    } else {
      row["reason"] = r.reason;
    }
    j["cases"].push_back(std::move(row));
  }
  j["not_modelable"] = GroupsJsonMlperf(v.not_modelable);
  j["not_modeled"] = GroupsJsonMlperf(v.not_modeled);
  j["rows_left_out"] = {{"duplicates", v.left_out.duplicates},
                        {"open_division", v.left_out.open_division},
                        {"unsuccessful", v.left_out.unsuccessful}};
  j["assumptions"] = v.assumptions;
  out << j.dump(2) << "\n";
}

}  // namespace

namespace {

// The modeled cases by benchmark, device and whether they span nodes: count,
// median signed error, its range, and the node counts.
TextTable WorkloadTableMlperf(const MlperfValidation& v) {
  struct Group {
    std::vector<double> errors;
    int min_nodes = 0, max_nodes = 0;
  };
  std::map<std::tuple<std::string, std::string, bool>, Group> groups;
  for (const MlperfCaseResult& r : v.cases) {
    if (!r.modeled) continue;
    Group& g = groups[{r.c.benchmark, r.c.device, r.c.nodes > 1}];
    g.errors.push_back(r.error_pct);
    g.min_nodes = g.errors.size() == 1 ? r.c.nodes : std::min(g.min_nodes, r.c.nodes);
    g.max_nodes = std::max(g.max_nodes, r.c.nodes);
  }
  TextTable t(
      {"benchmark", "device", "nodes", "cases", "median_error_%", "min_error_%", "max_error_%"});
  for (const auto& [key, g] : groups) {
    const auto [min, max] = std::minmax_element(g.errors.begin(), g.errors.end());
    t.AddRow({std::get<0>(key), std::get<1>(key),
              g.min_nodes == g.max_nodes ? std::to_string(g.min_nodes)
                                         : fmt::format("{}-{}", g.min_nodes, g.max_nodes),
              std::to_string(g.errors.size()), SignedPercentCell(Median(g.errors)),
              SignedPercentCell(*min), SignedPercentCell(*max)});
  }
  return t;
}

std::string PublishersWordMlperf(int n) { return n == 1 ? "publisher" : "publishers"; }

}  // namespace

void WriteMlperfValidation(std::ostream& out, const MlperfValidation& v, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    WriteJsonMlperf(out, v);
    return;
  }
  const int level_pct = static_cast<int>(std::lround(100 * v.interval_level));
  TextTable t({"round", "publisher", "system", "benchmark", "device", "devices", "batch",
               "measured_sps", "predicted_sps", "error_%",
               fmt::format("interval_{}%_sps", level_pct), "covered", "source"});
  for (const MlperfCaseResult& r : v.cases) {
    const MlperfCase& c = r.c;
    // Per-device batch; BERT in sequences.
    const std::string batch =
        c.accelerators > 0 ? std::to_string(c.global_batch / c.accelerators) : "-";
    t.AddRow({c.round, c.publisher, c.system, c.benchmark,
              c.device.empty() ? c.accelerator : c.device,
              fmt::format("{}x{}", c.nodes, c.accelerators_per_node), batch,
              SpsCellMlperf(c.samples_per_s), r.modeled ? SpsCellMlperf(r.predicted_sps) : "-",
              r.modeled          ? SignedPercentCell(r.error_pct)
              : c.device.empty() ? r.reason
                                 : "not modeled: " + ReasonGroupMlperf(r.reason),
              IntervalCellMlperf(r),
              r.modeled && r.interval_available ? (r.covered ? "yes" : "no") : "-",
              fmt::format("{}:{}", c.source.substr(c.source.find_last_of('/') + 1), c.line)});
  }
  if (format == OutputFormat::kCsv) {
    out << t.RenderCsv();
    return;
  }
  out << fmt::format(
      "MLPerf Training ResNet-50 and BERT-large, rounds 3.0-5.0, {} split{} (catalog "
      "predictions, nothing fitted; devices: nodes x per node, batch per device):\n",
      v.split, v.split == "test" ? " (report once per release of the model)" : "");
  out << t.Render();

  out << "\nPer publisher (|error| over modeled cases; coverage of the " << level_pct
      << "% interval):\n";
  TextTable p({"publisher", "cases", "median_|err|_%", "with_interval", "coverage_%", "not_modeled",
               "not_modelable"});
  for (const MlperfPublisherSummary& x : v.publishers) {
    p.AddRow({x.publisher, std::to_string(x.cases), PercentCell(x.median_abs_error_pct),
              std::to_string(x.with_interval), PercentCell(100 * x.coverage),
              std::to_string(x.not_modeled), std::to_string(x.not_modelable)});
  }
  out << p.Render();

  out << "\nBy workload (signed error over the modeled cases; nodes: the runs' node counts):\n"
      << WorkloadTableMlperf(v).Render();
  out << fmt::format(
      "\nPublishers weighted equally ({} split): median over {} {} of their median "
      "|error|: {}%; {}% interval coverage, each publisher's cases weighing 1 together: {}% "
      "({} {})\n",
      v.split, v.publishers_modeled, PublishersWordMlperf(v.publishers_modeled),
      PercentCell(v.median_of_publisher_medians_pct), level_pct,
      PercentCell(100 * v.publisher_weighted_coverage), v.publishers_with_interval,
      PublishersWordMlperf(v.publishers_with_interval));
  out << fmt::format(
      "Every case weighted equally, for comparison: {} cases, median |error| {}%, coverage {}%\n",
      v.modeled_cases, PercentCell(v.median_abs_error_pct), PercentCell(100 * v.case_coverage));
  if (!v.not_modelable.empty()) {
    out << "\nNot modelable (no catalog device is mapped to the accelerator: the catalog has "
           "none, or the submitter's code is not modeled; docs/validation.md):\n";
    for (const MlperfLeftOutGroup& g : v.not_modelable) out << GroupLineMlperf(g);
  }
  if (!v.not_modeled.empty()) {
    out << "\nNot modeled (a catalog device, but the step model refused the case):\n";
    for (const MlperfLeftOutGroup& g : v.not_modeled) out << GroupLineMlperf(g);
  }
  out << fmt::format(
      "\nRows of the whole table left out: {} duplicates, {} open division, {} without a "
      "successful run\n",
      v.left_out.duplicates, v.left_out.open_division, v.left_out.unsuccessful);
  out << "Assumptions:\n";
  for (const std::string& a : v.assumptions) out << "  - " << a << "\n";
}

}  // namespace fitspeed

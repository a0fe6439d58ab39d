// Transfer checked on the published cases (fitspeed/evidence/transfer.h;
// docs/validation.md, "Transfer").
#include "fitspeed/evidence/transfer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "core/median.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {

namespace {

double MeanAbs(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values) sum += std::fabs(v);
  return sum / static_cast<double>(values.size());
}

}  // namespace

TransferValidation ValidateTransfer(const std::vector<MeasuredCase>& cases,
                                    const TransferOptions& options) {
  ValidateTransferOptions(options);
  TransferValidation report;
  report.transfer_host = options.transfer_host;
  // The modeled, out-of-sample cases and their catalog predictions.
  ValidateOptions validate;
  validate.devices = options.devices;
  validate.optimizer = options.optimizer;
  const ValidationReport catalog = Validate(cases, validate);

  std::vector<std::string> device_names;  // in order of first appearance
  std::map<std::string, Device> devices;
  for (const ValidatedCase& v : catalog.cases) {
    if (!v.modeled || devices.count(v.measured.device)) continue;
    const auto given = std::find_if(options.devices.begin(), options.devices.end(),
                                    [&v](const Device& d) { return d.name == v.measured.device; });
    devices.emplace(v.measured.device,
                    given != options.devices.end() ? *given : LoadDevice(v.measured.device));
    device_names.push_back(v.measured.device);
  }
  // Groups: network (with its sequence length), precision, framework, devices.
  using Group = std::tuple<std::string, Precision, std::string, int>;
  auto group_of = [](const MeasuredCase& c) {
    return Group(CaseNetworkKey(c), c.precision, c.framework, c.devices);
  };
  std::vector<Group> groups;
  for (const ValidatedCase& v : catalog.cases) {
    if (v.modeled &&
        std::find(groups.begin(), groups.end(), group_of(v.measured)) == groups.end()) {
      groups.push_back(group_of(v.measured));
    }
  }
  std::map<std::string, Network> networks;
  auto network_of = [&networks](const MeasuredCase& c) -> const Network& {
    auto it = networks.find(CaseNetworkKey(c));
    if (it == networks.end()) {
      it = networks.emplace(CaseNetworkKey(c), LoadNetwork(c.network, CaseZooOptions(c))).first;
    }
    return it->second;
  };

  std::vector<double> all_errors, all_catalog, all_other;
  for (const std::string& a : device_names) {
    for (const std::string& b : device_names) {
      if (a == b || devices.at(a).kind != devices.at(b).kind) continue;
      TransferPairSummary pair;
      pair.source_device = a;
      pair.target_device = b;
      pair.pair = a + "->" + b;
      std::vector<double> errors, catalog_errors;
      for (const Group& g : groups) {
        std::vector<MeasuredCase> on_a;
        std::vector<const ValidatedCase*> on_b;
        for (const ValidatedCase& v : catalog.cases) {
          if (!v.modeled || group_of(v.measured) != g) continue;
          if (v.measured.device == a) on_a.push_back(v.measured);
          // A case B was calibrated on is not predicted: nothing is fitted to it.
          if (v.measured.device == b && !v.in_sample) on_b.push_back(&v);
        }
        if (on_a.empty() || on_b.empty()) continue;
        TransferFold fold;
        fold.source_device = a;
        fold.target_device = b;
        std::tie(fold.network, fold.precision, fold.framework, fold.devices) = g;
        fold.source_cases = static_cast<int>(on_a.size());
        fold.target_cases = static_cast<int>(on_b.size());
        try {
          const TransferCalibration t =
              CalibrateTransfer(devices.at(a), devices.at(b), on_a, options);
          if (!t.converged) {
            fold.problem =
                fmt::format("the calibration on {} did not converge: {}", a, t.solver_message);
          } else {
            fold.computed = true;
            fold.fitted = t.fitted;
            fold.applied = t.applied;
            fold.source_after = t.source_after;
            const Device other = ApplyCalibration(
                devices.at(b), CarriedParameters(t.fitted, !options.transfer_host));
            std::vector<double> fold_errors;
            for (const ValidatedCase* v : on_b) {
              const MeasuredCase& c = v->measured;
              const Network& network = network_of(c);
              const DeviceModelOptions model = CaseModelOptions(c, options.optimizer);
              TransferredCase p;
              p.source_device = a;
              p.target_device = b;
              p.pair = pair.pair;
              p.network = CaseNetworkKey(c);
              p.precision = c.precision;
              p.framework = c.framework;
              p.devices = c.devices;
              p.batch = c.batch;
              p.accumulation = c.accumulation;
              p.key = v->key;
              p.source = c.source;
              for (const MeasuredCase& from : on_a) {
                if (std::find(p.from_sources.begin(), p.from_sources.end(), from.source) ==
                    p.from_sources.end()) {
                  p.from_sources.push_back(from.source);
                }
              }
              p.line = c.line;
              p.measured_sps = c.throughput_sps;
              p.predicted_sps = ModelStep(network, t.target, c.batch, model).throughput_sps;
              p.catalog_sps = v->predicted_sps;
              p.error_pct = PercentError(p.predicted_sps, p.measured_sps);
              p.catalog_error_pct = v->error_pct;
              p.log_ratio = std::log(p.measured_sps / p.predicted_sps);
              fold_errors.push_back(p.error_pct);
              catalog_errors.push_back(p.catalog_error_pct);
              all_other.push_back(PercentError(
                  ModelStep(network, other, c.batch, model).throughput_sps, p.measured_sps));
              report.cases.push_back(std::move(p));
            }
            fold.error = SummarizeErrorsPct(fold_errors);
            errors.insert(errors.end(), fold_errors.begin(), fold_errors.end());
          }
        } catch (const Error& e) {
          fold.problem = e.what();
        }
        report.folds.push_back(std::move(fold));
      }
      if (errors.empty()) continue;
      pair.error = SummarizeErrorsPct(errors);
      pair.catalog = SummarizeErrorsPct(catalog_errors);
      pair.mean_abs_error_pct = MeanAbs(errors);
      all_errors.insert(all_errors.end(), errors.begin(), errors.end());
      all_catalog.insert(all_catalog.end(), catalog_errors.begin(), catalog_errors.end());
      report.pairs.push_back(std::move(pair));
    }
  }
  report.overall = SummarizeErrorsPct(all_errors);
  report.overall_catalog = SummarizeErrorsPct(all_catalog);
  report.overall_mean_abs_error_pct = MeanAbs(all_errors);
  report.other_rule = SummarizeErrorsPct(all_other);
  report.other_rule_mean_abs_error_pct = MeanAbs(all_other);
  return report;
}

}  // namespace fitspeed

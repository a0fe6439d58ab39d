// Framework profiles fitted to published GPU runs (framework_profiles.h).
#include "fitspeed/evidence/framework_profiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/evidence/interval_table.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {

namespace {

// The efficiency scales `cases` determine on their devices, and the host overhead.
std::vector<CalibrationParameter> ProfileParameters(const std::vector<MeasuredCase>& cases,
                                                    const std::vector<const Device*>& devices) {
  std::vector<CalibrationParameter> p = ScalesDetermined(cases, devices);
  p.push_back(CalibrationParameter::kStepHost);
  std::sort(p.begin(), p.end());
  return p;
}

struct Fitted {
  std::vector<CalibratedParameter> parameters;
  bool converged = false;
  double rms = 0;
};

Fitted FitShared(const std::vector<MeasuredCase>& cases,
                 const std::map<std::string, Device>& by_name, const CalibrationOptions& base) {
  std::vector<Device> devices;
  std::vector<const Device*> case_devices;
  for (const MeasuredCase& c : cases) {
    const Device& d = by_name.at(c.device);
    case_devices.push_back(&d);
    if (std::none_of(devices.begin(), devices.end(),
                     [&d](const Device& x) { return x.name == d.name; })) {
      devices.push_back(d);
    }
  }
  CalibrationOptions options = base;
  options.parameters = ProfileParameters(cases, case_devices);
  options.leave_one_network_out = false;
  if (cases.size() <= options.parameters.size()) {
    throw DataError(fmt::format("{} case(s) for {} parameters leave no degree of freedom",
                                cases.size(), options.parameters.size()));
  }
  const SharedCalibration r = CalibrateShared(devices, cases, options);
  return {r.parameters, r.converged, r.after.rms};
}

double Predicted(const MeasuredCase& c, const Device& device, Optimizer optimizer) {
  const Network network = LoadNetwork(c.network, CaseZooOptions(c));
  return ModelStep(network, device, c.batch, CaseModelOptions(c, optimizer)).throughput_sps;
}

}  // namespace

FrameworkProfileReport FitFrameworkProfiles(const std::vector<MeasuredCase>& cases,
                                            const CalibrationOptions& options,
                                            const std::vector<Device>& given,
                                            const ProgressCallback& progress) {
  FrameworkProfileReport report;
  std::map<std::string, Device> devices;
  for (const Device& d : given) devices.insert_or_assign(d.name, d);
  std::vector<std::string> frameworks;
  std::map<std::string, std::vector<MeasuredCase>> by_framework;
  for (const MeasuredCase& c : cases) {
    if (c.framework.empty()) continue;
    if (devices.count(c.device) == 0) devices.emplace(c.device, LoadDevice(c.device));
    if (devices.at(c.device).kind != "gpu") continue;
    if (by_framework.count(c.framework) == 0) frameworks.push_back(c.framework);
    by_framework[c.framework].push_back(c);
  }
  const auto total = static_cast<int64_t>(frameworks.size());
  int64_t done = 0;
  for (const std::string& name : frameworks) {
    const std::vector<MeasuredCase>& mine = by_framework.at(name);
    ReportProgress(progress, "framework profiles", done++, total, [&] {
      return fmt::format("{}: {} cases, each GPU held out in turn", name, mine.size());
    });
    FrameworkProfile profile;
    profile.name = name;
    profile.cases = static_cast<int>(mine.size());
    for (const MeasuredCase& c : mine) {
      if (std::find(profile.devices.begin(), profile.devices.end(), c.device) ==
          profile.devices.end()) {
        profile.devices.push_back(c.device);
      }
      if (std::find(profile.networks.begin(), profile.networks.end(), c.network) ==
          profile.networks.end()) {
        profile.networks.push_back(c.network);
      }
    }
    try {
      const Fitted f = FitShared(mine, devices, options);
      profile.parameters = f.parameters;
      profile.converged = f.converged;
      profile.rms_error = f.rms;
      report.profiles.push_back(profile);
    } catch (const DataError& e) {
      // Too few cases for a profile: none, and no folds.
      report.skipped.push_back({name, profile.cases, e.what()});
      continue;
    }
    // Leave one GPU out, and the held-out runs' publisher with it: a fold
    // predicts one publisher's runs on one GPU from the framework's runs on the
    // other GPUs by other publishers (a new user's setup is another publisher's).
    std::vector<std::pair<std::string, std::string>> held_out_groups;  // (GPU, publisher)
    for (const std::string& held : profile.devices) {
      for (const MeasuredCase& c : mine) {
        const std::pair<std::string, std::string> g{held, CasePublisher(c.source)};
        if (c.device == held &&
            std::find(held_out_groups.begin(), held_out_groups.end(), g) == held_out_groups.end()) {
          held_out_groups.push_back(g);
        }
      }
    }
    for (const auto& [held, publisher] : held_out_groups) {
      FrameworkFold fold;
      fold.framework = name;
      fold.device = held;
      fold.publisher = publisher;
      std::vector<MeasuredCase> training, held_cases;
      for (const MeasuredCase& c : mine) {
        const bool same_publisher = CasePublisher(c.source) == publisher;
        if (c.device == held) {
          if (same_publisher) held_cases.push_back(c);
        } else if (!same_publisher) {
          training.push_back(c);
          if (std::find(fold.training_devices.begin(), fold.training_devices.end(), c.device) ==
              fold.training_devices.end()) {
            fold.training_devices.push_back(c.device);
          }
        }
      }
      fold.cases = static_cast<int>(held_cases.size());
      fold.held_out = held_cases;
      fold.training_cases = static_cast<int>(training.size());
      const Device& target = devices.at(held);
      for (const MeasuredCase& c : held_cases) {
        fold.catalog_errors.push_back(Predicted(c, target, options.optimizer) / c.throughput_sps -
                                      1);
      }
      if (training.empty()) {
        fold.problem = "no other GPU has runs of this framework by another publisher";
      } else {
        // The scales the held-out runs need must be among those fitted.
        std::vector<const Device*> training_devices, held_devices(held_cases.size(), &target);
        for (const MeasuredCase& c : training) training_devices.push_back(&devices.at(c.device));
        const std::vector<CalibrationParameter> fitted =
            ProfileParameters(training, training_devices);
        for (CalibrationParameter p : ProfileParameters(held_cases, held_devices)) {
          if (std::find(fitted.begin(), fitted.end(), p) == fitted.end()) {
            fold.problem =
                fmt::format("the other GPUs' runs do not determine the {} this one needs",
                            CalibrationParameterName(p));
          }
        }
        if (fold.problem.empty()) {
          try {
            const Fitted f = FitShared(training, devices, options);
            if (!f.converged) {
              fold.problem = "the fit did not converge";
            } else {
              fold.parameters = f.parameters;
              fold.computed = true;
              const Device profiled = ApplyCalibration(target, f.parameters);
              for (const MeasuredCase& c : held_cases) {
                fold.profile_errors.push_back(
                    Predicted(c, profiled, options.optimizer) / c.throughput_sps - 1);
              }
            }
          } catch (const DataError& e) {
            fold.problem = e.what();
          }
        }
      }
      report.folds.push_back(std::move(fold));
    }
  }
  ReportProgress(progress, "framework profiles", total, total,
                 [&] { return fmt::format("{} frameworks", total); });
  return report;
}

}  // namespace fitspeed

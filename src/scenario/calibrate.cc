// Calibration as a request (fitspeed/scenario/calibrate.h).
#include "fitspeed/scenario/calibrate.h"

#include <fmt/format.h>

#include "fitspeed/calibrate/output.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

// The cases of `names` (device names, or as written) in `files`; the others
// go to `skipped`, counted in a note.
std::vector<MeasuredCase> CasesOf(const std::vector<std::string>& names,
                                  const std::vector<std::string>& written,
                                  const std::vector<std::string>& files,
                                  std::vector<MeasuredCase>& skipped,
                                  std::vector<std::string>& notes) {
  std::vector<MeasuredCase> used;
  for (const std::string& file : files) {
    CaseSelection selection = SelectCasesOf(ReadCasesCsv(file), names);
    for (MeasuredCase& c : selection.used) used.push_back(std::move(c));
    for (MeasuredCase& c : selection.skipped) skipped.push_back(std::move(c));
  }
  if (!skipped.empty()) {
    notes.push_back(fmt::format("skipped {} case(s) of other devices: {}", skipped.size(),
                                CountByDevice(skipped)));
  }
  if (used.empty()) {
    throw DataError(fmt::format("no case of device{} '{}' in {}", written.size() > 1 ? "s" : "",
                                fmt::join(written, "', '"), fmt::join(files, ", ")));
  }
  return used;
}

}  // namespace

void CalibrateRequest::Validate() const {
  if (device.empty()) throw UsageError("device: give a catalog device or a device JSON file");
  if (cases_files.empty()) throw UsageError("cases: give at least one cases CSV file");
  for (const std::string& name : from) {
    if (name.empty()) throw UsageError("from: an empty device name");
  }
  ValidateCalibrationOptions(options);
}

CalibrateAnswer CalibrateRequest::Run() const {
  Validate();
  CalibrateAnswer answer;
  if (from.empty()) {
    const Device d = LoadDevice(device);
    const std::vector<MeasuredCase> used =
        CasesOf({device, d.name}, {device}, cases_files, answer.skipped, answer.notes);
    answer.result = CalibrateDevice(d, used, options);
    answer.cases = used.size();
    answer.device = answer.result->device;
    answer.usable = answer.result->usable();
  } else {
    std::vector<Device> devices;
    std::vector<std::string> names = from;
    for (const std::string& name : from) {
      devices.push_back(LoadDevice(name));
      names.push_back(devices.back().name);
    }
    const Device target = LoadDevice(device);
    std::vector<MeasuredCase> used =
        CasesOf(names, from, cases_files, answer.skipped, answer.notes);
    // Each case named by its device's name (a case may name it as written on
    // the command line, a file path), as CalibrateShared matches them.
    std::vector<const Device*> of_case;
    for (MeasuredCase& c : used) {
      for (size_t i = 0; i < devices.size(); ++i) {
        if (c.device == devices[i].name || c.device == from[i]) {
          c.device = devices[i].name;
          of_case.push_back(&devices[i]);
          break;
        }
      }
    }
    CalibrationOptions o = options;
    // The scales the cases determine: compute for work on CUDA cores, tensor
    // for tensor-unit work (TF32, FP16/BF16, a TPU's FP32). Overheads belong to
    // each setup and are not carried to another device unless asked for.
    if (!parameters_stated) o.parameters = ScalesDetermined(used, of_case);
    answer.shared = CalibrateShared(devices, used, o);
    answer.device = ApplyCalibration(target, answer.shared->parameters);
    answer.from = from;
    answer.target = target.name;
    answer.cases = used.size();
    answer.usable = answer.shared->converged;
  }
  if (!answer.usable) answer.problem = "the calibration did not converge; no device file written";
  return answer;
}

void CalibrateAnswer::Write(std::ostream& out, OutputFormat format) const {
  if (result) {
    WriteCalibration(out, *result, skipped, format);
  } else if (shared) {
    WriteSharedCalibration(out, *shared, target, from, cases, format);
  }
}

std::string CalibrateAnswer::BriefReport() const {
  if (result) return result->BriefReport();
  return fmt::format("{}: scales fitted on {} case(s) of {}, {}", target, cases,
                     fmt::join(from, ", "),
                     shared && shared->converged ? "converged" : "not converged");
}

}  // namespace fitspeed

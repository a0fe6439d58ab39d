// The framework section of `fitspeed validate --frameworks`: the framework
// profiles fitted on the published GPU runs and their leave-one-device-out
// errors (fitspeed/device/frameworks.h; docs/validation.md, "Framework
// profiles"); --frameworks-out writes the profiles (data/frameworks.json).
#ifndef FITSPEED_TOOLS_FITSPEED_VALIDATE_FRAMEWORKS_H_
#define FITSPEED_TOOLS_FITSPEED_VALIDATE_FRAMEWORKS_H_

#include <string>
#include <vector>

#include "fitspeed/io/output.h"

namespace fitspeed::cli {

// Fits the profiles to the cases of `data_dir` against the catalog devices,
// or the device files of `device_files` where they name one, and writes the
// report as a table, CSV (the folds) or JSON; writes the profiles to
// `profiles_out` when not empty. Returns 0.
int RunFrameworkCheck(const std::string& data_dir, const std::vector<std::string>& device_files,
                      const std::string& profiles_out, OutputFormat format);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_VALIDATE_FRAMEWORKS_H_

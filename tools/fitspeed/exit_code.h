// Exit codes of the `fitspeed` CLI (sysexits.h numbering where one applies;
// docs/design.md, "CLI contract"), and the code of each fitspeed::Error kind.
// The library throws the kinds (fitspeed/core/error.h); only the CLI exits.
#ifndef FITSPEED_TOOLS_FITSPEED_EXIT_CODE_H_
#define FITSPEED_TOOLS_FITSPEED_EXIT_CODE_H_

#include "fitspeed/core/error.h"

namespace fitspeed::cli {

enum class ExitCode : int {
  kOk = 0,
  kFitUnusable = 1,  // a fit did not converge or is unusable
  kUsage = 64,       // bad command line or options
  kDataError = 65,   // input data malformed or unusable (file and line named)
  kNoInput = 66,     // input missing or unreadable
  kInternal = 70,    // a bug: an invariant did not hold
};

// UsageError 64, DataError 65, InputError 66, any other Error 70.
inline ExitCode ExitCodeOf(const Error& e) {
  if (dynamic_cast<const UsageError*>(&e) != nullptr) return ExitCode::kUsage;
  if (dynamic_cast<const DataError*>(&e) != nullptr) return ExitCode::kDataError;
  if (dynamic_cast<const InputError*>(&e) != nullptr) return ExitCode::kNoInput;
  return ExitCode::kInternal;
}

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_EXIT_CODE_H_

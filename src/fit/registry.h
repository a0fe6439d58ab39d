// The laws as the rest of the fit layer sees them at run time: one entry per
// law of laws.h, built from its template by MakeLawEntry (fit.cc).
#ifndef FITSPEED_SRC_FIT_REGISTRY_H_
#define FITSPEED_SRC_FIT_REGISTRY_H_

#include <string>
#include <vector>

#include "fit/laws.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"

namespace fitspeed {

struct LawEntry {
  const char* name;
  const char* formula;
  int num_params;
  const ParamSpec* params;  // num_params entries
  double (*throughput)(const double* params, double batch);
  double (*asymptote)(const double* params);
  double (*batch_at_fraction)(const double* params, double fraction);
  // Fits the law to one group; options already validated.
  GroupFit (*fit)(const std::vector<Sample>& samples, const FitOptions& options);
};

// Every law, in the order LawNames() lists them.
const std::vector<LawEntry>& Laws();

// The law named `name`, or nullptr.
const LawEntry* FindLaw(const std::string& name);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_FIT_REGISTRY_H_

// Options shared by `fitspeed project` and `fitspeed plan` (both defined in
// project_command.cc): where the law comes from, the workload, prices, and
// the data-parallel scaling model.
#ifndef FITSPEED_TOOLS_FITSPEED_PROJECT_OPTIONS_H_
#define FITSPEED_TOOLS_FITSPEED_PROJECT_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "command.h"
#include "fitspeed/project/config.h"
#include "fitspeed/project/epochs.h"
#include "fitspeed/project/scaling.h"
#include "fitspeed/scenario/project.h"

namespace fitspeed::cli {

// The law's source (logs come through InputOptions) and the workload.
struct LawSourceOptions {
  std::string fit_json;            // --fit FILE.json
  double v0 = NAN;                 // --v0, samples/s
  double t = NAN;                  // --t, s
  std::string label;               // --label of the --v0/--t configuration
  int law_devices = 1;             // --law-devices
  double samples_per_epoch = NAN;  // --samples
  bool drop_remainder = false;
  std::vector<double> batches;      // --batch, global
  std::string startup;              // --startup DURATION
  std::string first_epoch_extra;    // --first-epoch-extra DURATION
  std::vector<std::string> prices;  // --price
};
void AddLawSourceOptions(CLI::App& command, LawSourceOptions& options);

// Data-parallel scaling of single-device configurations.
struct ScalingCliOptions {
  std::vector<int> devices;
  std::string allreduce = "ring";
  std::string intra_bw, intra_latency, inter_bw, inter_latency;
  // --links FILE (fitspeed.links/1): its "devices" link is the in-node one,
  // its "network" link the one between nodes.
  std::string links;
  int devices_per_node = 0;
  double overlap = 1;
  std::string model;
  double params = NAN;
  double bytes_per_param = 4;
  double gradient_bytes = NAN;
  bool comm_from_fit = false;
};
void AddScalingOptions(CLI::App& command, ScalingCliOptions& options);

// The law's source of the command line: logs (read here), --fit FILE.json
// (read here) or --v0/--t, with --batch. UsageError unless exactly one.
LawSource ToLawSource(const InputOptions& input, const FitCliOptions& fit,
                      const LawSourceOptions& options);

// The scaling of --devices, --allreduce, the links and the gradient size, with
// the bandwidths and durations parsed.
ScalingSpec ToScalingSpec(const ScalingCliOptions& options);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_PROJECT_OPTIONS_H_

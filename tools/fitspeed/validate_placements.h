// The placements section of `fitspeed validate --placements`: the step model
// with the all-reduce overlapped (PyTorch DDP buckets) and serial against
// Pollux's 2-4 GPU placements on one T4 node, predictions for 2 and 4 such
// nodes, and Pollux's measured 2-4 node rows over an assumed and a calibrated
// network link (fitspeed/evidence/placements.h; docs/validation.md, "Pollux
// placements").
#ifndef FITSPEED_TOOLS_FITSPEED_VALIDATE_PLACEMENTS_H_
#define FITSPEED_TOOLS_FITSPEED_VALIDATE_PLACEMENTS_H_

#include <string>
#include <vector>

#include "fitspeed/io/output.h"

namespace fitspeed::cli {

// Runs the check on `data_dir`/pollux_t4_single_node.csv with the catalog t4
// (or the t4 of `device_files`). The network link between nodes comes from
// `links_file` (its "network" link) when given, else the assumed 50 Gbit/s
// of AWS's g4dn.12xlarge. Then models `data_dir`/pollux_t4_multi_node.csv
// (2, 3 and 4 nodes) over that link and over one calibrated from the rows on
// `calibration_nodes` nodes (CheckPolluxMultiNode). Writes a table, CSV or
// JSON; returns 0.
int RunPlacementCheck(const std::string& data_dir, const std::vector<std::string>& device_files,
                      const std::string& links_file, int calibration_nodes, OutputFormat format);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_VALIDATE_PLACEMENTS_H_

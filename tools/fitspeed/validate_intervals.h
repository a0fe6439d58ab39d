// The prediction-interval section of `fitspeed validate`: the leave-one-source-
// out coverage of the intervals (fitspeed/device/intervals.h) and the interval
// each class gets from all the data.
#ifndef FITSPEED_TOOLS_FITSPEED_VALIDATE_INTERVALS_H_
#define FITSPEED_TOOLS_FITSPEED_VALIDATE_INTERVALS_H_

#include <nlohmann/json.hpp>
#include <ostream>

#include "fitspeed/evidence/interval_table.h"

namespace fitspeed::cli {

// The section as text tables: coverage per class and overall, for the catalog
// predictions and (when the table has them) the transferred ones.
void WriteIntervalSection(std::ostream& out, const IntervalTable& table, double level);

// The same as JSON: {"level", "catalog": {"classes", "overall"}, "transfer": ...}.
nlohmann::ordered_json IntervalSectionJson(const IntervalTable& table, double level);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_VALIDATE_INTERVALS_H_

// Projection and plan reports: text tables (times as h:mm:ss), CSV, and JSON
// (schemas "fitspeed.project/1", "fitspeed.plan/1"; docs/design.md, "Schemas").
#ifndef FITSPEED_PROJECT_REPORT_H_
#define FITSPEED_PROJECT_REPORT_H_

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/io/output.h"
#include "fitspeed/project/epochs.h"
#include "fitspeed/project/plan.h"
#include "fitspeed/project/scaling.h"

namespace fitspeed {

// Everything `fitspeed project` reports.
struct Projection {
  std::vector<EpochModel> models;  // one per configuration, in table order
  std::vector<double> epochs;      // the projected epoch counts
  double confidence = 0.95;
  std::vector<ProjectionRow> rows;  // ProjectTotals(models, ...)
  std::vector<ScalingRow> scaling;  // empty unless a scaling was asked for
  // Words on how the numbers were obtained (model, method, assumptions).
  std::vector<std::string> assumptions;
};

// Models -> rows, and the assumptions of every model (deduplicated) followed
// by the interval method.
Projection MakeProjection(std::vector<EpochModel> models, const ProjectOptions& options);

// Seconds as h:mm:ss with unbounded hours ("133:20:00"), rounded to the
// second; "-" prefix when negative; "nan" when not finite.
std::string FormatHms(double seconds);

// Table: one row per configuration, a column per epoch count (h:mm:ss), with a
// line of interval half-widths and a line of costs under it where known; then
// the scaling table and the assumptions. CSV: one row per configuration and
// epoch count. JSON: "fitspeed.project/1".
void WriteProjection(std::ostream& out, const Projection& projection, OutputFormat format);

// Table / CSV: one row per configuration in the plan's order, with the limits
// met and the Pareto mark. JSON: "fitspeed.plan/1".
void WritePlan(std::ostream& out, const PlanResult& plan, OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_REPORT_H_

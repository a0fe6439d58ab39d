// Writers: samples and fits as text tables, CSV, JSON (schemas in
// docs/design.md, "Schemas") and an SVG plot.
#ifndef FITSPEED_IO_OUTPUT_H_
#define FITSPEED_IO_OUTPUT_H_

#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/output_format.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"

namespace fitspeed {

// `fitspeed read`: one row per sample; JSON schema "fitspeed.samples/1".
void WriteSamples(std::ostream& out, const std::vector<Sample>& samples, OutputFormat format);

// `fitspeed fit`: the table is the full report of each group; CSV has one row
// per group and parameter; JSON schema "fitspeed.fit/1".
void WriteFit(std::ostream& out, const FitResult& result, OutputFormat format);

// The JSON text of a fit result (schema "fitspeed.fit/1"), pretty-printed.
std::string FitToJson(const FitResult& result);

struct PlotOptions {
  std::string title = "Training throughput against batch size";
  int width_px = 800;
  int height_px = 500;
  std::string id = "fit";  // the <svg>'s id (unique within an HTML page)
};

// An SVG of each group's observed throughput (markers), fitted curve (line)
// and the curve's confidence band at the fit's level
// (GroupFit::ThroughputInterval) against batch on a log2 axis; colours,
// dashes and marker shapes per group that survive colour-blindness and grey
// print (docs/reports.md).
std::string FitSvg(const FitResult& result, const PlotOptions& options = {});
void WriteFitSvg(std::ostream& out, const FitResult& result, const PlotOptions& options = {});

}  // namespace fitspeed

#endif  // FITSPEED_IO_OUTPUT_H_

// What every answer of the scenario layer has (docs/design.md, "Scenarios"):
// one request struct per question a user asks (a host or device sweep, an
// LLM step or plan, a fit, a projection, a plan, a calibration), each with
// documented fields, Validate() and Run(); Run() returns an Answer, which the
// CLI and the Python module only print or convert. They parse into requests
// and never assemble the pipeline themselves, so both give the same numbers
// and the same notes.
//
//   fitspeed::LlmStepRequest request;
//   request.model = "llama-3-70b";  request.cluster.device = "h100";
//   request.training.seq_len = 8192;  request.split.tp = 8;
//   fitspeed::LlmStepAnswer answer = request.Run();
//   std::cout << answer.FullReport();
#ifndef FITSPEED_SCENARIO_ANSWER_H_
#define FITSPEED_SCENARIO_ANSWER_H_

#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/output_format.h"

namespace fitspeed {

class Answer {
 public:
  virtual ~Answer() = default;

  // The answer in `format` (table, csv or json), as `fitspeed` prints it.
  virtual void Write(std::ostream& out, OutputFormat format) const = 0;
  // One line: what was answered and its main numbers.
  virtual std::string BriefReport() const = 0;
  // Write() as a table.
  std::string FullReport() const;
  // Write() as JSON (the schema of the answer's kind, docs/design.md "Schemas").
  std::string ToJson() const;
  // The answer as one self-contained HTML page (`--output html`,
  // docs/reports.md): the tables, SVG plots of what was answered with their
  // intervals, the assumptions and notes, and the table report folded at the
  // end. UsageError for an answer that has none (a calibration).
  virtual void WriteHtml(std::ostream& out) const;
  std::string ToHtml() const;

  // Sentences said on the way that are not part of the numbers: where a link
  // came from, a framework profile applied, a batch that could not be fitted.
  // The CLI writes each on stderr after "fitspeed: ".
  std::vector<std::string> notes;
  // Whether the numbers can be relied on; when false, `problem` says why (a
  // fit that did not converge, too few batches measured). The CLI exits 1.
  bool usable = true;
  std::string problem;
};

}  // namespace fitspeed

#endif  // FITSPEED_SCENARIO_ANSWER_H_

// The modeled communication of a data-parallel sweep and its writer
// (data_parallel.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/timing/data_parallel.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

std::string ModeledTable(const SweepResult& sweep, const ModeledCommunication& modeled) {
  const bool same = modeled.ranks == sweep.ranks;
  std::vector<std::string> header{"batch_per_rank", "ranks",     "batch",
                                  "compute_ms",     "copies_ms", "modeled_comm_ms",
                                  "overlapped_ms",  "serial_ms"};
  if (same) {
    for (const char* h : {"measured_ms", "overlapped_err_%", "serial_err_%"}) header.push_back(h);
  }
  TextTable table(header);
  for (size_t i = 0; i < modeled.steps.size(); ++i) {
    const BatchMeasurement& measured = sweep.measurements[i];
    const ModeledDataParallelStep& m = modeled.steps[i];
    std::vector<std::string> row{std::to_string(measured.data_parallel->per_rank_batch),
                                 std::to_string(m.ranks),
                                 std::to_string(m.global_batch),
                                 FormatSig(m.compute_s * 1e3, 4),
                                 FormatSig(m.copies_s * 1e3, 3),
                                 FormatSig(m.timeline.comm_s * 1e3, 3),
                                 FormatSig(m.overlapped_step_s * 1e3, 4),
                                 FormatSig(m.serial_step_s * 1e3, 4)};
    if (same) {
      row.push_back(FormatSig(measured.step_time_s * 1e3, 4));
      row.push_back(FormatSig((m.overlapped_step_s / measured.step_time_s - 1) * 100, 3));
      row.push_back(FormatSig((m.serial_step_s / measured.step_time_s - 1) * 100, 3));
    }
    table.AddRow(row);
  }
  return table.Render();
}

ordered_json ModeledJson(const SweepResult& sweep, const ModeledCommunication& modeled) {
  ordered_json j = {{"links", modeled.links}, {"steps", ordered_json::array()}};
  for (size_t i = 0; i < modeled.steps.size(); ++i) {
    const BatchMeasurement& measured = sweep.measurements[i];
    const ModeledDataParallelStep& m = modeled.steps[i];
    ordered_json row = {{"per_rank_batch", measured.data_parallel->per_rank_batch},
                        {"ranks", m.ranks},
                        {"batch", m.global_batch},
                        {"compute_s", m.compute_s},
                        {"copies_s", m.copies_s},
                        {"modeled_comm_s", m.timeline.comm_s},
                        {"modeled_exposed_s", m.timeline.exposed_s},
                        {"overlapped_step_s", m.overlapped_step_s},
                        {"serial_step_s", m.serial_step_s}};
    if (m.ranks == sweep.ranks) {
      row["measured_step_s"] = measured.step_time_s;
      row["overlapped_relative_error"] = m.overlapped_step_s / measured.step_time_s - 1;
      row["serial_relative_error"] = m.serial_step_s / measured.step_time_s - 1;
    }
    j["steps"].push_back(row);
  }
  return j;
}

}  // namespace

ModeledCommunication ModelCommunication(const SweepResult& sweep, const CommModel& comm_model,
                                        int ranks, const std::string& links) {
  ModeledCommunication modeled;
  modeled.links = links;
  modeled.ranks = ranks;
  for (const BatchMeasurement& m : sweep.measurements) {
    modeled.steps.push_back(ModelMeasuredDataParallelStep(m, comm_model, ranks));
  }
  return modeled;
}

void WriteDataParallelSweep(std::ostream& out, const SweepResult& sweep, const FitResult& fit,
                            OutputFormat format, bool layers, const ModeledCommunication* modeled) {
  if (modeled == nullptr || modeled->steps.empty()) {
    WriteSweep(out, sweep, fit, format, layers);
    return;
  }
  FITSPEED_CHECK(modeled->steps.size() == sweep.measurements.size(),
                 "one modeled step per measurement");
  switch (format) {
    case OutputFormat::kJson: {
      std::ostringstream text;
      WriteSweep(text, sweep, fit, format, layers);
      ordered_json j = ordered_json::parse(text.str());
      j["modeled_communication"] = ModeledJson(sweep, *modeled);
      out << j.dump(2) << "\n";
      break;
    }
    case OutputFormat::kTable:
      WriteSweep(out, sweep, fit, format, layers);
      out << fmt::format(
                 "\nthe same steps with the all-reduces modeled from {} on {} rank{}: "
                 "measured compute and gradient copies, each bucket's all-reduce from the "
                 "links, from its measured ready time, one at a time; overlapped: only what "
                 "outlasts the backward pass counts (communication beside the compute, as "
                 "NCCL on a GPU); serial: all of it (the ranks' CPUs move the data, as MPI "
                 "over shared memory does):\n",
                 modeled->links, modeled->ranks, modeled->ranks == 1 ? "" : "s")
          << ModeledTable(sweep, *modeled);
      break;
    case OutputFormat::kCsv:
      WriteSweep(out, sweep, fit, format, layers);
      break;
  }
}

}  // namespace fitspeed

// Fits, projections and plans from a law as requests (fitspeed/scenario/project.h).
#include "fitspeed/scenario/project.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/io/output.h"
#include "fitspeed/project/model_params.h"

namespace fitspeed {

// ------------------------------------------------------------------ fit

void FitRequest::Validate() const {
  if (samples.empty()) throw DataError("no samples to fit");
  ValidateFitOptions(options);
}

FitAnswer FitRequest::Run() const {
  Validate();
  FitAnswer answer;
  answer.fit = Fit(samples, options);
  if (!answer.fit.AllUsable()) {
    answer.usable = false;
    answer.problem = "some fits are not usable (see their warnings)";
  }
  return answer;
}

void FitAnswer::Write(std::ostream& out, OutputFormat format) const { WriteFit(out, fit, format); }

std::string FitAnswer::BriefReport() const { return fit.BriefReport(); }

// ------------------------------------------------------------------ the law's source

void LawSource::Validate() const {
  const int sources = !samples.empty() + !fit_json.empty() + law.has_value();
  if (sources != 1) {
    throw UsageError(
        "give exactly one source of the law: logs (INPUT...), --fit FILE.json, or --v0 and --t");
  }
  if (law) ValidateSpeedLaw(*law, "--v0/--t");
  if (law_devices < 1) throw UsageError(fmt::format("law devices {}: must be >= 1", law_devices));
  for (double b : batches) {
    if (!(std::isfinite(b) && b > 0)) {
      throw UsageError(fmt::format("batch {}: must be a finite number > 0", b));
    }
  }
  if (!samples.empty()) ValidateFitOptions(fit);
}

std::vector<Configuration> LawSource::Configurations(std::vector<std::string>& notes) const {
  Validate();
  std::vector<Configuration> configs;
  if (law) {
    Configuration c;
    c.label = label;
    c.devices = law_devices;
    c.law = *law;
    configs.push_back(c);
  } else if (!fit_json.empty()) {
    configs = ConfigurationsFromFitJson(fit_json, fit_json_name);
  } else {
    try {
      configs = ConfigurationsFromFit(Fit(samples, fit), samples);
    } catch (const DataError& e) {
      // A per-epoch log at one batch size cannot be fitted, but its epochs
      // can be projected as they are.
      const auto groups = GroupSamples(samples);
      const bool one_batch_epochs =
          std::any_of(groups.begin(), groups.end(), [](const auto& group) {
            const std::vector<Sample>& g = group.second;
            return std::all_of(g.begin(), g.end(), [&](const Sample& x) {
              return x.epoch_time_s && x.batch == g.front().batch;
            });
          });
      if (!one_batch_epochs) throw;
      throw DataError(
          fmt::format("{}; or project its epochs as they were measured, without a law: "
                      "fitspeed project --measured INPUT...",
                      e.what()));
    }
  }
  for (Configuration& c : configs) {
    if (!batches.empty()) c.batches = batches;
    if (c.batches.empty()) {
      throw UsageError(fmt::format("no batch sizes for '{}': give --batch", c.Name()));
    }
    if (!c.usable) {
      notes.push_back(fmt::format("warning: the fit of '{}' is not usable{}{}", c.Name(),
                                  c.warnings.empty() ? "" : ": ",
                                  c.warnings.empty() ? "" : c.warnings.front()));
    }
  }
  return configs;
}

namespace {

// The samples per epoch: `given` when > 0, else the samples' one value.
double SamplesPerEpoch(double given, const std::vector<Sample>& samples) {
  if (given > 0) return given;
  double n = 0;
  for (const Sample& s : samples) {
    if (!s.samples_per_epoch) continue;
    if (n > 0 && n != *s.samples_per_epoch) {
      throw UsageError("the inputs have different samples per epoch; give --samples");
    }
    n = *s.samples_per_epoch;
  }
  if (!(n > 0)) throw UsageError("give the training samples per epoch with --samples N");
  return n;
}

bool AllUsable(const std::vector<Configuration>& configs) {
  return std::all_of(configs.begin(), configs.end(),
                     [](const Configuration& c) { return c.usable; });
}

}  // namespace

// ------------------------------------------------------------------ scaling

DataParallelModel ScalingSpec::ModelOf(const Configuration& config,
                                       const std::vector<Configuration>& all,
                                       std::vector<std::string>& notes) const {
  DataParallelModel m;
  m.single_device = config.law;
  m.comm.algorithm = allreduce;
  m.comm.devices_per_node = devices_per_node;
  m.overlap_gamma = overlap;
  const int byte_sources = gradient_bytes.has_value() + params.has_value() + !model.empty();
  if (byte_sources > 1) throw UsageError("give one of --gradient-bytes, --params and --model");
  if (gradient_bytes) m.gradient_bytes = *gradient_bytes;
  if (params) m.gradient_bytes = GradientBytes(*params, bytes_per_param);
  if (!model.empty()) {
    const auto published = FindPublishedModel(model);
    if (!published) throw UsageError(fmt::format("--model '{}' is not in the table", model));
    m.gradient_bytes = GradientBytes(published->parameters, bytes_per_param);
    notes.push_back(fmt::format("{}: {} parameters ({})", published->name,
                                FormatSig(published->parameters, 10), published->source));
  }
  const LinksFile file = links.empty() ? LinksFile() : ReadLinksJsonFile(links);
  const DeviceLink* intra_link = file.FindLink("devices");
  const DeviceLink* inter_link = file.FindLink("network");
  // Each link used, in the file's order: not also given by options, and noted.
  for (size_t i = 0; i < file.links.size(); ++i) {
    const DeviceLink& l = file.links[i];
    if (&l != intra_link && &l != inter_link) continue;
    const bool intra = &l == intra_link;
    if (intra ? intra_bandwidth || intra_latency || comm_from_fit
              : inter_bandwidth || inter_latency) {
      throw UsageError(fmt::format("--links {} gives the {} link (its \"{}\" link): not with {}",
                                   links, intra ? "in-node" : "between-node", l.connects,
                                   intra ? "--intra-bw, --intra-latency or --comm-from-fit"
                                         : "--inter-bw or --inter-latency"));
    }
    const std::string note = fmt::format(
        "{} link from {}: '{}', {} B/s ({}), latency {} s ({})", intra ? "in-node" : "between-node",
        links, l.name, FormatSig(l.bandwidth_bytes_per_s, 4),
        file.sources.at(fmt::format("links[{}].bandwidth_bytes_per_s", i)),
        FormatSig(l.latency_s, 3), file.sources.at(fmt::format("links[{}].latency_s", i)));
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  }
  if (!links.empty() && intra_link == nullptr && inter_link == nullptr) {
    throw UsageError(fmt::format("--links {}: no link connects \"devices\" or \"network\"", links));
  }
  if (inter_link != nullptr) m.comm.inter_node = *inter_link;
  if (intra_latency) m.comm.intra_node.latency_s = *intra_latency;
  if (inter_latency) m.comm.inter_node.latency_s = *inter_latency;
  if (inter_bandwidth) m.comm.inter_node.bandwidth_bytes_per_s = *inter_bandwidth;
  if (comm_from_fit) {
    if (intra_bandwidth) throw UsageError("--comm-from-fit and --intra-bw exclude each other");
    const RingCommFit ring = FitRingToConfigurations(config, all);
    // Without a gradient size the link is calibrated for one "byte" per step.
    if (m.gradient_bytes == 0) m.gradient_bytes = 1;
    m.comm.intra_node = ring.AsLink(m.gradient_bytes);
    notes.push_back(fmt::format(
        "{}: in-node communication fitted to t(n) - t(1) of {} fits: 2(n-1)/n * {} s + 2(n-1) * "
        "{} s (rms residual {} s), extrapolated beyond the measured device counts",
        config.Name(), ring.points + 1, FormatSig(ring.bandwidth_term_s, 4),
        FormatSig(ring.latency_s, 4), FormatSig(ring.rms_residual_s, 3)));
  } else {
    if (intra_link != nullptr) {
      m.comm.intra_node = *intra_link;
    } else if (!intra_bandwidth) {
      throw UsageError(
          "scaling to --devices needs --intra-bw, a --links file with a \"devices\" link, or "
          "--comm-from-fit");
    } else {
      m.comm.intra_node.bandwidth_bytes_per_s = *intra_bandwidth;
    }
    if (m.gradient_bytes == 0) {
      throw UsageError(
          "scaling to --devices needs the gradient size: --params, --model or --gradient-bytes");
    }
  }
  ValidateDataParallelModel(m);
  return m;
}

// ------------------------------------------------------------------ project

void ProjectRequest::Validate() const {
  if (measured) {
    if (source.samples.empty() || !source.fit_json.empty() || source.law) {
      throw UsageError(
          "--measured projects per-epoch logs given as INPUT...; not with --fit, --v0 or --t");
    }
  } else {
    source.Validate();
  }
  if (samples_per_epoch < 0 || !std::isfinite(samples_per_epoch)) {
    throw UsageError(
        fmt::format("samples per epoch {}: must be > 0 (0: the logs')", samples_per_epoch));
  }
  if (!(min_efficiency > 0 && min_efficiency <= 1)) {
    throw UsageError(fmt::format("min_efficiency {}: must be in (0, 1]", min_efficiency));
  }
  if (max_devices < 0) throw UsageError(fmt::format("max_devices {}: must be >= 0", max_devices));
}

ProjectAnswer ProjectRequest::Run() const {
  Validate();
  ProjectAnswer answer;
  std::vector<EpochModel> models;
  std::vector<ScalingRow> scaling_rows;
  std::vector<std::string> assumptions;
  if (measured) {
    for (EpochLog& log : EpochLogsFromSamples(source.samples)) {
      if (!log.startup_s && startup_s) log.startup_s = *startup_s;
      models.push_back(EpochModelFromLog(log));
    }
  } else {
    const std::vector<Configuration> configs = source.Configurations(answer.notes);
    Workload w;
    w.samples_per_epoch = SamplesPerEpoch(samples_per_epoch, source.samples);
    w.steps_rule = steps_rule;
    w.startup_s = startup_s.value_or(0);
    w.first_epoch_extra_s = first_epoch_extra_s;
    w.validation = validation;
    ValidateWorkload(w);
    for (const std::string& note : WhatIfNotes(whatifs)) assumptions.push_back(note);
    for (const Configuration& c : configs) {
      for (EpochModel& m : LawModels(c, w, whatifs)) models.push_back(std::move(m));
    }
    if (!scaling.devices.empty()) {
      ScalingRequest request{scaling.devices, weak, strong, max_devices, min_efficiency};
      bool any = false;
      for (const Configuration& c : configs) {
        if (c.devices != 1) continue;
        any = true;
        const DataParallelModel m = scaling.ModelOf(c, configs, assumptions);
        ScaledProjection scaled = ProjectScaling(c.Name(), m, c.batches, w, request);
        scaling_rows.insert(scaling_rows.end(), scaled.rows.begin(), scaled.rows.end());
        for (EpochModel& model : scaled.models) models.push_back(std::move(model));
        assumptions.insert(assumptions.end(), scaled.notes.begin(), scaled.notes.end());
      }
      if (!any) throw UsageError("--devices scales single-device configurations; none was given");
    }
    answer.usable = AllUsable(configs);
    if (!answer.usable) answer.problem = "some fits are not usable (see the warnings above)";
  }
  answer.projection = MakeProjection(std::move(models), options);
  answer.projection.scaling = std::move(scaling_rows);
  answer.projection.assumptions.insert(answer.projection.assumptions.end(), assumptions.begin(),
                                       assumptions.end());
  return answer;
}

void ProjectAnswer::Write(std::ostream& out, OutputFormat format) const {
  WriteProjection(out, projection, format);
}

std::string ProjectAnswer::BriefReport() const {
  return fmt::format("{} projected configurations, {} rows", projection.models.size(),
                     projection.rows.size());
}

// ------------------------------------------------------------------ plan

void LawPlanRequest::Validate() const {
  source.Validate();
  if (samples_per_epoch < 0 || !std::isfinite(samples_per_epoch)) {
    throw UsageError(
        fmt::format("samples per epoch {}: must be > 0 (0: the logs')", samples_per_epoch));
  }
}

LawPlanAnswer LawPlanRequest::Run() const {
  Validate();
  LawPlanAnswer answer;
  std::vector<std::string> notes;
  const std::vector<Configuration> configs = source.Configurations(answer.notes);
  PlanRequest request = plan;
  request.samples_per_epoch = SamplesPerEpoch(samples_per_epoch, source.samples);
  std::vector<PlanCandidate> candidates;
  for (const Configuration& c : configs) {
    candidates.push_back(CandidateFromLaw(c.Name(), c.devices, c.law, c.batches));
  }
  if (!scaling.devices.empty()) {
    bool any = false;
    for (const Configuration& c : configs) {
      if (c.devices != 1) continue;
      any = true;
      const DataParallelModel model = scaling.ModelOf(c, configs, notes);
      for (int n : scaling.devices) {
        if (n == 1) continue;  // the configuration itself
        // Without batches given, each measured batch per device, on n devices.
        std::vector<double> batches = c.batches;
        if (source.batches.empty()) {
          for (double& b : batches) b *= n;
        }
        candidates.push_back(CandidateFromScaling(c.Name(), n, model, batches));
      }
    }
    if (!any) throw UsageError("--devices scales single-device configurations; none was given");
  }
  answer.plan = Plan(candidates, request, order);
  answer.request = request;
  answer.plan.assumptions.insert(answer.plan.assumptions.end(), notes.begin(), notes.end());
  answer.usable = AllUsable(configs);
  if (!answer.usable) answer.problem = "some fits are not usable (see the warnings above)";
  return answer;
}

void LawPlanAnswer::Write(std::ostream& out, OutputFormat format) const {
  WritePlan(out, plan, format);
}

std::string LawPlanAnswer::BriefReport() const {
  return fmt::format("{} configurations planned", plan.rows.size());
}

}  // namespace fitspeed

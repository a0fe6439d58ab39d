// Capacity planning (see plan.h).
#include "fitspeed/project/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "core/finite.h"
#include "core/table.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

constexpr double kNoCost = std::numeric_limits<double>::infinity();  // sorts last

void AddOnce(std::vector<std::string>& list, const std::string& text) {
  if (std::find(list.begin(), list.end(), text) == list.end()) list.push_back(text);
}

// Seconds of one epoch at global batch B when a step takes step_time(B); a
// partial last batch (keep-partial rule) is timed at its own batch.
double EpochSeconds(const PlanCandidate& c, double batch, double samples, StepsRule rule) {
  const double used = SamplesUsedPerEpoch(samples, batch, rule);
  const double full = std::floor(used / batch + 1e-9);
  const double remainder = used - full * batch;
  double seconds = full * c.step_time_s(batch);
  if (remainder > 1e-9 * batch) seconds += c.step_time_s(remainder);
  return seconds;
}

}  // namespace

double OptimalBatch(double b_noise, const SpeedLaw& law_all_devices) {
  ValidateSpeedLaw(law_all_devices, "law");
  if (!PositiveFinite(b_noise)) {
    throw UsageError(fmt::format("B_noise must be > 0 and finite, got {}", b_noise));
  }
  // d/dB [E_min (1 + B/B_noise) N/B (B/v0 + t)] = 0  =>  B^2 = B_noise*v0*t.
  return std::sqrt(b_noise * law_all_devices.v0_sps * law_all_devices.t_s);
}

PlanCandidate CandidateFromLaw(const std::string& device, int devices, const SpeedLaw& law,
                               std::vector<double> batches) {
  ValidateSpeedLaw(law, fmt::format("law of {}", device));
  PlanCandidate c;
  c.device = device;
  c.devices = devices;
  c.step_time_s = [law](double batch) { return law.StepTime(batch); };
  c.law = law;
  c.batches = std::move(batches);
  c.assumptions.push_back("step time T(B) = B/v0 + t of each configuration's own law");
  return c;
}

PlanCandidate CandidateFromScaling(const std::string& device, int devices,
                                   const DataParallelModel& model, std::vector<double> batches) {
  ValidateDataParallelModel(model);
  if (devices < 1) throw UsageError(fmt::format("devices must be >= 1, got {}", devices));
  PlanCandidate c;
  c.device = device;
  c.devices = devices;
  c.step_time_s = [model, devices](double batch) {
    return StepTime(model, devices, batch / devices);
  };
  // Without overlap the step is of the law's form: v0 of all devices, t plus
  // the all-reduce; with overlap this law bounds the step time from above.
  SpeedLaw law = model.single_device;
  law.v0_sps *= devices;
  law.t_s += CommTime(model, devices);
  law.covariance.setZero();
  law.dof = 0;
  c.law = law;
  c.batches = std::move(batches);
  c.assumptions.push_back(fmt::format(
      "multi-device step time from the single-device law and a {} all-reduce of {} bytes, "
      "overlap g = {}",
      AllReduceName(model.comm.algorithm), FormatSig(model.gradient_bytes, 6),
      FormatSig(model.overlap_gamma, 4)));
  if (model.overlap_gamma > 1) {
    c.assumptions.push_back(
        "B* of an overlapped configuration is computed without the overlap (t + t_comm)");
  }
  if (!law.model_errors.empty()) {
    c.assumptions.push_back(
        "scaled configurations: the model's interval covers the modeled single-device step, "
        "not the error of the all-reduce model added to it");
  }
  return c;
}

void ValidatePlanRequest(const PlanRequest& r) {
  if (!PositiveFinite(r.samples_per_epoch)) {
    throw UsageError(
        fmt::format("samples per epoch must be > 0 and finite, got {}", r.samples_per_epoch));
  }
  if (r.epochs.has_value() == r.epochs_vs_batch.has_value()) {
    throw UsageError(
        "give either a number of epochs or the epochs-vs-batch law (E_min and "
        "B_noise), not both and not neither");
  }
  if (r.epochs && !PositiveFinite(*r.epochs)) {
    throw UsageError(fmt::format("epochs must be > 0 and finite, got {}", *r.epochs));
  }
  if (r.epochs_vs_batch) {
    if (!PositiveFinite(r.epochs_vs_batch->e_min)) {
      throw UsageError(fmt::format("E_min must be > 0, got {}", r.epochs_vs_batch->e_min));
    }
    if (!PositiveFinite(r.epochs_vs_batch->b_noise)) {
      throw UsageError(fmt::format("B_noise must be > 0, got {}", r.epochs_vs_batch->b_noise));
    }
  }
  if (r.deadline_s && !PositiveFinite(*r.deadline_s)) {
    throw UsageError(fmt::format("deadline must be > 0, got {} s", *r.deadline_s));
  }
  if (r.budget && !PositiveFinite(*r.budget)) {
    throw UsageError(fmt::format("budget must be > 0, got {}", *r.budget));
  }
  if (!(r.interval_level > 0 && r.interval_level < 1)) {
    throw UsageError(fmt::format("interval level must be in (0, 1), got {}", r.interval_level));
  }
  if (!NonNegativeFinite(r.startup_s) || !NonNegativeFinite(r.first_epoch_extra_s)) {
    throw UsageError("startup and first-epoch extra times must be >= 0 and finite");
  }
}

PlanResult Plan(const std::vector<PlanCandidate>& candidates, const PlanRequest& request,
                PlanOrder order) {
  ValidatePlanRequest(request);
  if (candidates.empty()) throw UsageError("no configurations to plan with");
  PlanResult result;
  for (const PlanCandidate& c : candidates) {
    if (c.devices < 1) {
      throw UsageError(fmt::format("{}: devices must be >= 1, got {}", c.device, c.devices));
    }
    if (!c.step_time_s) throw UsageError(fmt::format("{}: no step time model", c.device));
    const std::optional<double> price = request.prices.For(c.device);
    if (request.budget && !price) {
      throw UsageError(
          fmt::format("a budget needs a price per device-hour for '{}' (--price "
                      "{}=PRICE or --price PRICE)",
                      c.device, c.device));
    }
    for (const std::string& a : c.assumptions) AddOnce(result.assumptions, a);

    std::vector<std::pair<double, bool>> batches;  // batch, is B*
    for (double b : c.batches) {
      if (!PositiveFinite(b)) {
        throw UsageError(fmt::format("{}: batch sizes must be > 0, got {}", c.device, b));
      }
      batches.emplace_back(b, false);
    }
    if (request.epochs_vs_batch && request.add_optimal_batch && c.law) {
      const double star = OptimalBatch(request.epochs_vs_batch->b_noise, *c.law);
      const double rounded = std::max(1.0, std::round(star / c.devices)) * c.devices;
      bool found = false;
      for (auto& [b, is_star] : batches) {
        if (b == rounded) is_star = found = true;
      }
      if (!found) batches.emplace_back(rounded, true);
    }
    if (batches.empty()) {
      throw UsageError(
          fmt::format("{} on {} device(s): no batch sizes to consider", c.device, c.devices));
    }
    std::sort(batches.begin(), batches.end());
    for (const auto& [batch, is_star] : batches) {
      if (batch < c.devices) continue;  // less than one sample per device
      if (request.steps_rule == StepsRule::kDropRemainder && batch > request.samples_per_epoch) {
        continue;
      }
      PlanRow row;
      row.device = c.device;
      row.devices = c.devices;
      row.batch = batch;
      row.optimal_batch = is_star;
      row.epochs = request.epochs ? *request.epochs : request.epochs_vs_batch->Epochs(batch);
      row.steps_per_epoch = StepsPerEpoch(request.samples_per_epoch, batch, request.steps_rule);
      row.epoch_s = EpochSeconds(c, batch, request.samples_per_epoch, request.steps_rule);
      row.total_s = request.startup_s + request.first_epoch_extra_s + row.epochs * row.epoch_s;
      if (price) row.cost = RunCost(row.total_s, c.devices, *price);
      row.meets_deadline = !request.deadline_s || row.total_s <= *request.deadline_s;
      if (c.law && !c.law->model_errors.empty()) {
        const PredictionInterval m = c.law->model_errors.At(request.interval_level);
        if (m.available) {
          const TimeFactors f = CombinedTimeFactors(m, 0);
          const double part = row.epochs * row.epoch_s;
          row.total_low_s = row.total_s - part + part * f.low;
          row.total_high_s = row.total_s - part + part * f.high;
          row.interval_basis = m.basis;
          row.deadline_at_risk =
              row.meets_deadline && request.deadline_s && *row.total_high_s > *request.deadline_s;
          AddOnce(result.assumptions,
                  fmt::format("{:.0f}% interval of a total (total_low..total_high): the device "
                              "model's split conformal interval from {} out-of-sample published "
                              "cases of class {} ({} publishers), applied to the epochs' time; "
                              "'met (at risk)': the deadline is met by the prediction but not by "
                              "the interval's slow end",
                              100 * request.interval_level, m.cases, m.basis, m.sources));
        } else {
          AddOnce(result.assumptions,
                  fmt::format("{} on {} device(s): no {:.0f}% interval from the model's errors "
                              "({})",
                              c.device, c.devices, 100 * request.interval_level, m.reason));
        }
      }
      row.meets_budget = !request.budget || (row.cost && *row.cost <= *request.budget);
      result.rows.push_back(row);
    }
  }

  // Pareto set among the feasible rows (rows without a cost compare on time).
  auto dominates = [](const PlanRow& a, const PlanRow& b) {
    const bool both_costed = a.cost.has_value() && b.cost.has_value();
    const bool neither_costed = !a.cost && !b.cost;
    if (!both_costed && !neither_costed) return false;
    const bool time_le = a.total_s <= b.total_s, time_lt = a.total_s < b.total_s;
    if (neither_costed) return time_lt;
    return time_le && *a.cost <= *b.cost && (time_lt || *a.cost < *b.cost);
  };
  for (PlanRow& row : result.rows) {
    if (!row.feasible()) continue;
    row.pareto = std::none_of(result.rows.begin(), result.rows.end(), [&](const PlanRow& other) {
      return other.feasible() && dominates(other, row);
    });
  }

  auto by_time = [](const PlanRow& a, const PlanRow& b) {
    if (a.total_s != b.total_s) return a.total_s < b.total_s;
    return a.cost.value_or(kNoCost) < b.cost.value_or(kNoCost);
  };
  auto by_cost = [&](const PlanRow& a, const PlanRow& b) {
    const double ca = a.cost.value_or(kNoCost), cb = b.cost.value_or(kNoCost);
    if (ca != cb) return ca < cb;
    return a.total_s < b.total_s;
  };
  std::stable_sort(result.rows.begin(), result.rows.end(), [&](const PlanRow& a, const PlanRow& b) {
    if (a.feasible() != b.feasible()) return a.feasible();
    return order == PlanOrder::kFastest ? by_time(a, b) : by_cost(a, b);
  });
  for (size_t i = 0; i < result.rows.size(); ++i) {
    const PlanRow& row = result.rows[i];
    if (!row.feasible()) continue;
    if (!result.fastest || by_time(row, result.rows[*result.fastest])) result.fastest = i;
    if (row.cost && (!result.cheapest || by_cost(row, result.rows[*result.cheapest]))) {
      result.cheapest = i;
    }
  }

  AddOnce(result.assumptions,
          fmt::format("{} samples per epoch, {}", FormatSig(request.samples_per_epoch, 10),
                      request.steps_rule == StepsRule::kKeepPartial
                          ? "ceil(N/B) steps (last batch partial, timed at its own size)"
                          : "floor(N/B) steps (remainder dropped)"));
  if (request.epochs) {
    AddOnce(result.assumptions,
            fmt::format("{} epochs at every batch", FormatSig(*request.epochs, 6)));
  } else {
    AddOnce(result.assumptions,
            fmt::format("epochs to target E(B) = E_min*(1 + B/B_noise) with E_min = {}, B_noise "
                        "= {} (McCandlish et al. 2018); B* = sqrt(B_noise*n*v0*t) rounded to a "
                        "multiple of n",
                        FormatSig(request.epochs_vs_batch->e_min, 6),
                        FormatSig(request.epochs_vs_batch->b_noise, 6)));
  }
  if (request.startup_s > 0 || request.first_epoch_extra_s > 0) {
    AddOnce(
        result.assumptions,
        fmt::format("every run adds startup {} s and first-epoch extra {} s",
                    FormatSig(request.startup_s, 6), FormatSig(request.first_epoch_extra_s, 6)));
  }
  if (!request.prices.empty()) {
    AddOnce(result.assumptions, "cost = devices x hours x price per device-hour");
  }
  return result;
}

}  // namespace fitspeed

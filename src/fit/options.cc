// Names of objectives, losses and laws, and the validation of FitOptions.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "fit/registry.h"
#include "fitspeed/core/error.h"
#include "fitspeed/fit/fit.h"

namespace fitspeed {

namespace {

constexpr Objective kObjectives[] = {Objective::kRelativeTime, Objective::kAbsoluteThroughput,
                                     Objective::kAbsoluteTime};
constexpr Loss kLosses[] = {Loss::kSquared, Loss::kHuber, Loss::kCauchy};

template <typename Enum, size_t N>
std::string NameList(const Enum (&values)[N], std::string (*name)(Enum)) {
  std::string list;
  for (Enum value : values) list += (list.empty() ? "" : ", ") + name(value);
  return list;
}

[[noreturn]] void Broken(const std::string& field, const std::string& value,
                         const std::string& rule) {
  throw UsageError(fmt::format("FitOptions::{} is {}; {}", field, value, rule));
}

void RequireNonNegativeFinite(const char* field, double value) {
  if (!std::isfinite(value) || value < 0) {
    Broken(field, fmt::format("{}", value), "must be finite and >= 0");
  }
}

}  // namespace

std::string ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kRelativeTime:
      return "relative-time";
    case Objective::kAbsoluteThroughput:
      return "absolute-throughput";
    case Objective::kAbsoluteTime:
      return "absolute-time";
  }
  return fmt::format("objective#{}", static_cast<int>(objective));
}

Objective ParseObjective(const std::string& name) {
  for (Objective objective : kObjectives) {
    if (ObjectiveName(objective) == name) return objective;
  }
  throw UsageError(fmt::format("unknown objective '{}'; must be one of: {}", name,
                               NameList(kObjectives, &ObjectiveName)));
}

std::string LossName(Loss loss) {
  switch (loss) {
    case Loss::kSquared:
      return "squared";
    case Loss::kHuber:
      return "huber";
    case Loss::kCauchy:
      return "cauchy";
  }
  return fmt::format("loss#{}", static_cast<int>(loss));
}

Loss ParseLoss(const std::string& name) {
  for (Loss loss : kLosses) {
    if (LossName(loss) == name) return loss;
  }
  throw UsageError(
      fmt::format("unknown loss '{}'; must be one of: {}", name, NameList(kLosses, &LossName)));
}

std::vector<std::string> LawNames() {
  std::vector<std::string> names;
  for (const LawEntry& law : Laws()) names.emplace_back(law.name);
  return names;
}

void ValidateFitOptions(const FitOptions& options) {
  const LawEntry* law = FindLaw(options.law);
  if (law == nullptr) {
    std::string names;
    for (const std::string& name : LawNames()) names += (names.empty() ? "" : ", ") + name;
    Broken("law", fmt::format("'{}'", options.law), "must be one of: " + names);
  }
  const int objective = static_cast<int>(options.objective);
  if (objective < 0 || objective > static_cast<int>(Objective::kAbsoluteTime)) {
    Broken("objective", std::to_string(objective),
           "must be one of: " + NameList(kObjectives, &ObjectiveName));
  }
  const int loss = static_cast<int>(options.loss);
  if (loss < 0 || loss > static_cast<int>(Loss::kCauchy)) {
    Broken("loss", std::to_string(loss), "must be one of: " + NameList(kLosses, &LossName));
  }
  if (!std::isfinite(options.loss_scale) || options.loss_scale <= 0) {
    Broken("loss_scale", fmt::format("{}", options.loss_scale), "must be finite and > 0");
  }
  if (!options.initial.empty()) {
    if (static_cast<int>(options.initial.size()) != law->num_params) {
      Broken("initial", fmt::format("a list of {} values", options.initial.size()),
             fmt::format("the {} law needs {} (or none for the automatic start)", law->name,
                         law->num_params));
    }
    for (int i = 0; i < law->num_params; ++i) {
      const ParamSpec& spec = law->params[i];
      const double value = options.initial[i];
      const bool ok =
          std::isfinite(value) && (spec.strict ? value > spec.lower : value >= spec.lower);
      if (!ok) {
        Broken(fmt::format("initial[{}]", i), fmt::format("{} ({})", value, spec.name),
               fmt::format("must be finite and {} {}", spec.strict ? ">" : ">=", spec.lower));
      }
    }
  }
  if (options.max_iterations < 1) {
    Broken("max_iterations", std::to_string(options.max_iterations), "must be >= 1");
  }
  RequireNonNegativeFinite("function_tolerance", options.function_tolerance);
  RequireNonNegativeFinite("parameter_tolerance", options.parameter_tolerance);
  RequireNonNegativeFinite("gradient_tolerance", options.gradient_tolerance);
  if (!(options.confidence > 0 && options.confidence < 1)) {
    Broken("confidence", fmt::format("{}", options.confidence), "must be in (0, 1)");
  }
}

}  // namespace fitspeed

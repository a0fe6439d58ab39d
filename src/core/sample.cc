#include "fitspeed/core/sample.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <ostream>
#include <tuple>

#include "fitspeed/core/error.h"

namespace fitspeed {

bool operator==(const SharedString& a, const SharedString& b) {
  return a.SharesWith(b) || a.str() == b.str();
}
bool operator==(const SharedString& a, const std::string& b) { return a.str() == b; }
bool operator==(const SharedString& a, const char* b) { return a.str() == b; }
bool operator<(const SharedString& a, const SharedString& b) { return a.str() < b.str(); }

std::ostream& operator<<(std::ostream& out, const SharedString& text) { return out << text.str(); }

double StepsPerEpoch(double samples_per_epoch, double batch, StepsRule rule) {
  const double ratio = samples_per_epoch / batch;
  // Guard the ratio against representation error (50000/64 is exact, but a
  // batch read as 0.1*10 need not be): within 1e-9 of an integer counts as it.
  const double nearest = std::round(ratio);
  if (std::fabs(ratio - nearest) <= 1e-9 * std::max(1.0, nearest)) return nearest;
  return rule == StepsRule::kKeepPartial ? std::ceil(ratio) : std::floor(ratio);
}

double SamplesUsedPerEpoch(double samples_per_epoch, double batch, StepsRule rule) {
  if (rule == StepsRule::kKeepPartial) return samples_per_epoch;
  return StepsPerEpoch(samples_per_epoch, batch, rule) * batch;
}

namespace {
void RequirePositiveFinite(const Sample& s, const char* field, double value) {
  if (std::isnan(value)) throw DataError(s.source, s.line, field, "is NaN");
  if (std::isinf(value)) throw DataError(s.source, s.line, field, "is infinite");
  if (value <= 0) {
    throw DataError(s.source, s.line, field, fmt::format("must be > 0, got {}", value));
  }
}
}  // namespace

void ValidateSample(const Sample& s) {
  RequirePositiveFinite(s, "batch", s.batch);
  if (s.devices < 1) {
    throw DataError(s.source, s.line, "devices", fmt::format("must be >= 1, got {}", s.devices));
  }
  const int observations =
      s.throughput_sps.has_value() + s.step_time_s.has_value() + s.epoch_time_s.has_value();
  if (observations != 1) {
    throw DataError(s.source, s.line, "",
                    fmt::format("a sample needs exactly one of throughput, step time or "
                                "epoch time; it has {}",
                                observations));
  }
  if (s.seq_len) RequirePositiveFinite(s, "seq_len", *s.seq_len);
  if (s.throughput_sps) RequirePositiveFinite(s, "throughput", *s.throughput_sps);
  if (s.step_time_s) RequirePositiveFinite(s, "step_time", *s.step_time_s);
  if (s.epoch_time_s) {
    RequirePositiveFinite(s, "epoch_time", *s.epoch_time_s);
    if (!s.samples_per_epoch) {
      throw DataError(s.source, s.line, "samples_per_epoch",
                      "an epoch time needs the samples per epoch (give it as "
                      "PATH@samples=N)");
    }
    RequirePositiveFinite(s, "samples_per_epoch", *s.samples_per_epoch);
    if (s.steps_rule == StepsRule::kDropRemainder && *s.samples_per_epoch < s.batch) {
      throw DataError(s.source, s.line, "batch",
                      fmt::format("batch {} exceeds the {} samples per epoch, so dropping "
                                  "the remainder leaves no step",
                                  s.batch, *s.samples_per_epoch));
    }
  }
}

StepObservation ToStepObservation(const Sample& s) {
  ValidateSample(s);
  if (s.throughput_sps) return {s.batch, s.batch / *s.throughput_sps};
  if (s.step_time_s) return {s.batch, *s.step_time_s};
  const double steps = StepsPerEpoch(*s.samples_per_epoch, s.batch, s.steps_rule);
  const double used = SamplesUsedPerEpoch(*s.samples_per_epoch, s.batch, s.steps_rule);
  return {used / steps, *s.epoch_time_s / steps};
}

std::string UnitName(Unit unit) { return unit == Unit::kTokens ? "tokens" : "samples"; }

Unit ParseUnit(const std::string& name) {
  if (name == "samples" || name == "sequences") return Unit::kSamples;
  if (name == "tokens") return Unit::kTokens;
  throw UsageError(
      fmt::format("unknown unit '{}': expected samples (or sequences) or tokens", name));
}

std::string RateUnitName(Unit unit) { return UnitName(unit) + "/s"; }

void ToSequences(Sample& s) {
  if (!s.seq_len) return;
  RequirePositiveFinite(s, "seq_len", *s.seq_len);
  if (s.unit != Unit::kTokens) return;
  const double per_sequence = *s.seq_len;
  s.batch /= per_sequence;
  if (s.throughput_sps) *s.throughput_sps /= per_sequence;
  if (s.samples_per_epoch) *s.samples_per_epoch /= per_sequence;
  s.unit = Unit::kSamples;
}

bool GroupKey::operator<(const GroupKey& o) const {
  return std::tie(devices, label, precision, unit) <
         std::tie(o.devices, o.label, o.precision, o.unit);
}
bool GroupKey::operator==(const GroupKey& o) const {
  return devices == o.devices && label == o.label && precision == o.precision && unit == o.unit;
}

std::string GroupKey::ToString() const {
  std::string text = fmt::format("devices={}", devices);
  if (!label.empty()) text += fmt::format(" label={}", label);
  if (!precision.empty()) text += fmt::format(" precision={}", precision);
  if (unit != Unit::kSamples) text += fmt::format(" unit={}", UnitName(unit));
  return text;
}

GroupKey GroupOf(const Sample& s) { return GroupKey{s.devices, s.label, s.precision, s.unit}; }

std::vector<std::pair<GroupKey, std::vector<Sample>>> GroupSamples(
    const std::vector<Sample>& samples) {
  std::map<GroupKey, std::vector<Sample>> groups;
  for (const Sample& s : samples) groups[GroupOf(s)].push_back(s);
  return {std::make_move_iterator(groups.begin()), std::make_move_iterator(groups.end())};
}

}  // namespace fitspeed

// The notes the scenarios say on the way (notes.h).
#include "scenario/notes.h"

#include <fmt/format.h>

#include "core/table.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

void ApplyLinksFileWithNotes(Device& device, const std::string& path,
                             std::vector<std::string>& notes) {
  const LinksFile links = ReadLinksJsonFile(path);
  ApplyLinks(device, links);
  for (size_t i = 0; i < links.links.size(); ++i) {
    const DeviceLink& l = links.links[i];
    notes.push_back(
        fmt::format("the {} link of {} comes from {}: '{}', {:.4g} B/s ({}), latency {:.4g} s ({})",
                    l.connects, device.name, path, l.name, l.bandwidth_bytes_per_s,
                    links.sources.at(fmt::format("links[{}].bandwidth_bytes_per_s", i)),
                    l.latency_s, links.sources.at(fmt::format("links[{}].latency_s", i))));
  }
}

std::string FrameworkProfileNote(const FrameworkProfile& profile, const std::string& device) {
  std::vector<std::string> values;
  for (const CalibratedParameter& p : profile.parameters) {
    values.push_back(fmt::format("{} {}", p.name, FormatSig(p.value, 4)));
  }
  return fmt::format(
      "framework profile '{}' applied to {} ({}; fitted on {} published runs on {}; "
      "docs/validation.md, \"Framework profiles\"); the interval below is that of the "
      "framework profiles' predictions on GPUs they were not fitted on{}",
      profile.name, device, fmt::join(values, ", "), profile.cases,
      fmt::join(profile.devices, ", "),
      profile.devices.size() < 2
          ? fmt::format(" (other frameworks': '{}' has runs on one GPU only, so its profile "
                        "has never been tested on another)",
                        profile.name)
          : "");
}

void CheckIntervalLevel(double level) {
  if (!(level > 0 && level < 1)) {
    throw UsageError(fmt::format("interval_level {}: must be in (0, 1)", level));
  }
}

}  // namespace fitspeed

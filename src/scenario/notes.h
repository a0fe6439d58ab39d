// What the scenarios share (fitspeed/scenario/answer.h): the notes they say on
// the way, written once here so that the CLI and Python say the same, and the
// check of an interval's level.
#ifndef FITSPEED_SRC_SCENARIO_NOTES_H_
#define FITSPEED_SRC_SCENARIO_NOTES_H_

#include <string>
#include <vector>

#include "fitspeed/device/device.h"
#include "fitspeed/device/frameworks.h"

namespace fitspeed {

// Reads the links file at `path`, applies it to `device` (ApplyLinks) and adds
// a note per link: "the devices link of h100 comes from FILE: 'name', B B/s
// (its source), latency L s (its source)".
void ApplyLinksFileWithNotes(Device& device, const std::string& path,
                             std::vector<std::string>& notes);

// "framework profile 'pytorch' applied to a100 (...; fitted on N published
// runs on ...); the interval below is that of the framework profiles'
// predictions on GPUs they were not fitted on".
std::string FrameworkProfileNote(const FrameworkProfile& profile, const std::string& device);

// UsageError unless `level` (a request's interval_level) is in (0, 1).
void CheckIntervalLevel(double level);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_SCENARIO_NOTES_H_

// Progress of a long operation (the LLM planner's search, a validation
// check), told to a callback the caller puts in the operation's options. The
// library never prints it: the caller decides where it goes (`fitspeed`
// redraws one line on standard error when that is a terminal, docs/cli.md).
// Callbacks come at the operation's natural steps (a search group, a fold, a
// device), never from an inner loop, so an empty one costs nothing measurable.
// A host sweep tells more (each batch's time) through its own SweepProgress.
//
//   fitspeed::LlmPlanOptions o;
//   o.progress = [](const fitspeed::Progress& p) {
//     std::cerr << p.stage << ": " << p.done << " of " << p.total << ", " << p.what << "\n";
//   };
#ifndef FITSPEED_CORE_PROGRESS_H_
#define FITSPEED_CORE_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace fitspeed {

struct Progress {
  // The step of the operation that runs, e.g. "planner", "cross-device check".
  std::string stage;
  // Units of the stage finished: 0 when it starts, never decreasing, equal to
  // `total` in the stage's last call.
  int64_t done = 0;
  int64_t total = 0;  // units of the stage, >= 1
  // What the unit is or what is being done, short: "tp 8, cp 1, pp 16",
  // "a100 fold: 4 GPUs held out".
  std::string what;
};

using ProgressCallback = std::function<void(const Progress&)>;

// Calls `callback`, when set, with a Progress; `describe()` gives `what` and
// runs only when there is a callback, so the text costs nothing otherwise.
template <typename Describe>
void ReportProgress(const ProgressCallback& callback, const char* stage, int64_t done,
                    int64_t total, Describe&& describe) {
  if (!callback) return;
  callback(Progress{stage, done, total, std::forward<Describe>(describe)()});
}

}  // namespace fitspeed

#endif  // FITSPEED_CORE_PROGRESS_H_

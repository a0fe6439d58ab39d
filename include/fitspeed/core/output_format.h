// The three forms every report writer offers (`--output table|csv|json`). In
// core because the writers of every layer take it (io, model, timing, device,
// project), none of which should include another's writers for it.
#ifndef FITSPEED_CORE_OUTPUT_FORMAT_H_
#define FITSPEED_CORE_OUTPUT_FORMAT_H_

#include <string_view>

namespace fitspeed {

enum class OutputFormat { kTable, kCsv, kJson };
OutputFormat ParseOutputFormat(std::string_view name);  // throws UsageError

}  // namespace fitspeed

#endif  // FITSPEED_CORE_OUTPUT_FORMAT_H_

#include "fitspeed/core/output_format.h"

#include <fmt/format.h>

#include "fitspeed/core/error.h"

namespace fitspeed {

OutputFormat ParseOutputFormat(std::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  throw UsageError(fmt::format("unknown output format '{}' (known: table, csv, json)", name));
}

}  // namespace fitspeed

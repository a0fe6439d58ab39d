#include "fitspeed/core/precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

// The name table: each precision's names in each context.
struct PrecisionNames {
  Precision precision;
  const char* device;  // PrecisionContext::kDevice, and the canonical name of kLog
  const char* host;    // PrecisionContext::kHost; nullptr where the host cannot run it
  std::vector<const char*> host_aliases;
  std::vector<const char*> log_aliases;  // besides `device`, compared in lower case
};

const std::array<PrecisionNames, 4>& NameTable() {
  static const std::array<PrecisionNames, 4> table = {{
      {Precision::kFp32, "fp32", "fp32", {"float32"}, {"float32", "float"}},
      {Precision::kTf32, "tf32", nullptr, {}, {}},
      {Precision::kMixed,
       "mixed",
       "bf16",
       {"bfloat16"},
       {"amp", "fp16", "bf16", "float16", "bfloat16", "half"}},
      {Precision::kFp8, "fp8", nullptr, {}, {"float8"}},
  }};
  return table;
}

const char* ContextName(PrecisionContext context) {
  switch (context) {
    case PrecisionContext::kDevice:
      return "device";
    case PrecisionContext::kHost:
      return "host";
    case PrecisionContext::kLog:
      return "log";
  }
  return "unknown";
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool Among(const std::string& name, const std::vector<const char*>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const char* PrecisionName(Precision precision, PrecisionContext context) {
  for (const PrecisionNames& n : NameTable()) {
    if (n.precision != precision) continue;
    const char* name = context == PrecisionContext::kHost ? n.host : n.device;
    FITSPEED_CHECK(name != nullptr,
                   fmt::format("precision {} has no {} name", n.device, ContextName(context)));
    return name;
  }
  FITSPEED_CHECK(false, "a precision without a row in the name table");
  return "unknown";
}

Precision ParsePrecision(const std::string& name, PrecisionContext context) {
  const std::string lower = Lower(name);
  std::vector<std::string> known;  // the context's names, for the message
  for (const PrecisionNames& n : NameTable()) {
    switch (context) {
      case PrecisionContext::kDevice:
        if (name == n.device) return n.precision;
        break;
      case PrecisionContext::kHost:
        if (n.host != nullptr && (name == n.host || Among(name, n.host_aliases))) {
          return n.precision;
        }
        break;
      case PrecisionContext::kLog:
        if (lower == n.device || Among(lower, n.log_aliases)) return n.precision;
        break;
    }
    const char* shown = context == PrecisionContext::kHost ? n.host : n.device;
    if (shown != nullptr) known.push_back(shown);
  }
  if (context == PrecisionContext::kHost) {
    for (const PrecisionNames& n : NameTable()) {
      if (n.host == nullptr && name == n.device) {
        throw UsageError(fmt::format("precision {}: the host cannot run it (it runs {})", name,
                                     fmt::join(known, ", ")));
      }
    }
  }
  throw UsageError(fmt::format("unknown {} precision '{}' (known: {})", ContextName(context), name,
                               fmt::join(known, ", ")));
}

}  // namespace fitspeed

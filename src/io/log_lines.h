// Helpers for the line-oriented logs of launchers and training frameworks
// (Megatron-LM, DeepSpeed, Keras progress bars): lines that may carry terminal
// colour codes, Python logging timestamps, and "name ....... value" settings
// dumps.
#ifndef FITSPEED_SRC_IO_LOG_LINES_H_
#define FITSPEED_SRC_IO_LOG_LINES_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fitspeed::io {

// The line without ANSI escape sequences ("\x1b[92m") and backspaces. Returns
// `line` itself when it has none; otherwise the cleaned text, kept in `buffer`.
std::string_view StripTerminalCodes(std::string_view line, std::string& buffer);

// One "name ....... value" line of a settings dump: Megatron-LM's arguments
// ("  micro_batch_size ................ 4") and DeepSpeed's configuration
// ("  train_batch_size ............. 256"). Long names get no dots, only two
// blanks ("  train_micro_batch_size_per_gpu  4"). Names are identifiers.
struct Setting {
  std::string_view name;
  std::string_view value;
};
std::optional<Setting> ParseSetting(std::string_view text);

// Seconds since 1970-01-01 of the first "[YYYY-MM-DD HH:MM:SS,mmm]" (Python
// logging's asctime; ".mmm" and no milliseconds are accepted too) on the
// line; nullopt when it has none.
std::optional<double> LogTimestamp(std::string_view line);

// The whole number >= 1 after `key` and "=" or ":" on the line, as argparse
// Namespaces ("distributed_world_size=4"), Python dicts ("'max_tokens': 15360"),
// YAML and launchers ("WORLD_SIZE: 4") print settings; a list's first element
// ("update_freq=[1]"). The key must not end a longer name ("world_size" is not
// found in "distributed_world_size"). nullopt when the line has none.
std::optional<double> WholeSettingAfter(std::string_view text, std::string_view key);

// The whole number >= 1 that an MLPerf ":::MLLOG {...}" line gives as the
// "value" of "key": `key` ("global_batch_size"), or nullopt for other lines.
std::optional<double> MllogWholeValue(std::string_view text, std::string_view key);

// Lines a reader left out for one reason, counted for one warning at the end
// that names the first of them (and, where given, what it held).
struct Dropped {
  int count = 0;
  int first_line = 0;
  std::string first_detail;

  void Add(int line, std::string detail = {}) {
    if (count++ == 0) {
      first_line = line;
      first_detail = std::move(detail);
    }
  }
};

}  // namespace fitspeed::io

#endif  // FITSPEED_SRC_IO_LOG_LINES_H_

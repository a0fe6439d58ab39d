// Test data for the reading benchmarks: a file under tests/data, whole, and the
// MLPerf log both reading benchmarks time (the MLLOG reader is the reference).
#ifndef FITSPEED_BENCH_BENCH_DATA_H_
#define FITSPEED_BENCH_BENCH_DATA_H_

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace fitspeed::bench {

// The bytes of tests/data/<name>; exits with a message when it cannot be read
// (a benchmark without its data has nothing to measure).
inline std::string ReadTestData(const std::string& name) {
  const std::string path = std::string(FITSPEED_TEST_DATA_DIR) + "/" + name;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << "cannot open " << path << "\n";
    std::exit(1);
  }
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Replaces the integer after `field` (e.g. "\"time_ms\": ") in `line` with `value`.
inline std::string SetNumber(std::string line, const std::string& field, long long value) {
  const size_t at = line.find(field);
  if (at == std::string::npos) return line;
  const size_t begin = at + field.size();
  size_t end = begin;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  return line.replace(begin, end - begin, std::to_string(value));
}

inline long long NumberAfter(const std::string& line, const std::string& field) {
  const size_t at = line.find(field);
  return at == std::string::npos ? -1 : std::atoll(line.c_str() + at + field.size());
}

// The MLLOG lines before the second block (header, epoch 1) once, then the
// second block (epochs 2-5 and their evaluation) again and again.
inline std::string BuildMllogLog(int target_lines) {
  std::istringstream in(ReadTestData("mllog/NVIDIA_dgxa100_ngc20.06_mxnet_resnet_result_0.txt"));
  std::vector<std::string> head, block;
  std::string line;
  int blocks_seen = 0;
  while (std::getline(in, line)) {
    if (line.compare(0, 8, ":::MLLOG") != 0) continue;
    if (line.find("\"key\": \"block_start\"") != std::string::npos) ++blocks_seen;
    if (blocks_seen < 2) {
      head.push_back(line);
    } else if (blocks_seen == 2) {
      block.push_back(line);
      if (line.find("\"key\": \"block_stop\"") != std::string::npos) ++blocks_seen;
    }
  }
  const long long t0 = NumberAfter(block.front(), "\"time_ms\": ");
  const long long period_ms = NumberAfter(block.back(), "\"time_ms\": ") - t0;
  const long long first_epoch = NumberAfter(block.front(), "\"first_epoch_num\": ");
  const long long epochs_per_block = NumberAfter(block.front(), "\"epoch_count\": ");

  std::string text;
  int lines = 0;
  for (const std::string& h : head) {
    text += h + '\n';
    ++lines;
  }
  for (long long b = 0; lines < target_lines; ++b) {
    for (const std::string& l : block) {
      std::string out =
          SetNumber(l, "\"time_ms\": ", NumberAfter(l, "\"time_ms\": ") + b * period_ms);
      const long long epoch = NumberAfter(l, "\"epoch_num\": ");
      if (epoch >= 0) out = SetNumber(out, "\"epoch_num\": ", epoch + b * epochs_per_block);
      if (NumberAfter(l, "\"first_epoch_num\": ") >= 0) {
        out = SetNumber(out, "\"first_epoch_num\": ", first_epoch + b * epochs_per_block);
      }
      text += out + '\n';
      ++lines;
    }
  }
  return text;
}

}  // namespace fitspeed::bench

#endif  // FITSPEED_BENCH_BENCH_DATA_H_

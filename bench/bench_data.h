// Test data for the reading benchmarks: a file under tests/data, whole.
#ifndef FITSPEED_BENCH_BENCH_DATA_H_
#define FITSPEED_BENCH_BENCH_DATA_H_

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

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

}  // namespace fitspeed::bench

#endif  // FITSPEED_BENCH_BENCH_DATA_H_

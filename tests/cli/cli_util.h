// Running the `fitspeed` CLI from the tests as a user would: shell words in,
// exit code, standard output and standard error out.
#ifndef FITSPEED_TESTS_CLI_CLI_UTIL_H_
#define FITSPEED_TESTS_CLI_CLI_UTIL_H_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace fitspeed::test {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Runs the CLI with `args` (shell words), optionally feeding `stdin_text`;
// `launcher` (shell words) starts it, e.g. mpirun.
inline CliRun RunCli(const std::string& args, const std::string& stdin_text = "",
                     const std::string& launcher = "") {
  // ctest runs the tests of this file in parallel processes: the scratch files
  // carry the test's name and the process id so that runs never share them.
  const std::string unique =
      std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
      std::to_string(getpid());
  const std::string dir = ::testing::TempDir();
  const std::string err_path = dir + "/fitspeed_cli_stderr_" + unique + ".txt";
  const std::string in_path = dir + "/fitspeed_cli_stdin_" + unique + ".txt";
  std::ofstream(in_path) << stdin_text;
  const std::string command = (launcher.empty() ? "" : launcher + " ") +
                              std::string(FITSPEED_CLI_PATH) + " " + args + " <" + in_path + " 2>" +
                              err_path;
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = ReadFile(err_path);
  return run;
}

inline std::string Data(const std::string& name) {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/" + name;
}

}  // namespace fitspeed::test

#endif  // FITSPEED_TESTS_CLI_CLI_UTIL_H_

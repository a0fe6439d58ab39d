// fitspeed: how fast a model trains at which batch size, on how many devices,
// and what N epochs take. A thin layer over the library; see `fitspeed --help`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/core/version.h"

namespace {

constexpr const char* kDescription =
    "fitspeed: training speed against batch size.\n"
    "Fits the law v(b) = b/(b/v0 + t) (v0: ideal throughput, samples/s; t: fixed\n"
    "cost per step, s) to measured logs, to training steps it runs on this CPU\n"
    "(sweep) or models on a catalogued GPU/TPU (sweep --device), and projects\n"
    "epochs, devices and cost.\n"
    "Data goes to stdout, messages to stderr. Long work (sweep, demo, validate, plan\n"
    "MODEL --device) redraws one line of progress on stderr when it is a terminal\n"
    "(--progress auto|always|never; default $FITSPEED_PROGRESS, else auto).\n\n"
    "Exit codes: 0 success; 1 a fit did not converge or is unusable; 64 usage;\n"
    "65 bad data (file and line named); 66 input missing or unreadable; 70 internal error.";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "fitspeed"};
  app.set_version_flag("--version", std::string("fitspeed ") + fitspeed::Version());
  app.require_subcommand(1);
  app.fallthrough();
  int exit_code = 0;
  fitspeed::cli::SetupReadCommand(app, exit_code);
  fitspeed::cli::SetupFitCommand(app, exit_code);
  fitspeed::cli::SetupProjectCommand(app, exit_code);
  fitspeed::cli::SetupPlanCommand(app, exit_code);
  fitspeed::cli::SetupModelsCommand(app, exit_code);
  fitspeed::cli::SetupSweepCommand(app, exit_code);
  fitspeed::cli::SetupDevicesCommand(app, exit_code);
  fitspeed::cli::SetupCalibrateCommand(app, exit_code);
  fitspeed::cli::SetupValidateCommand(app, exit_code);
  fitspeed::cli::SetupLinkbenchCommand(app, exit_code);
  fitspeed::cli::SetupDemoCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end parsing with exit code 0; anything else is a usage error.
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(fitspeed::cli::ExitCode::kUsage);
  } catch (const fitspeed::Error& e) {
    std::fflush(stdout);
    std::cerr << "fitspeed: " << e.what() << "\n";
    return static_cast<int>(fitspeed::cli::ExitCodeOf(e));
  } catch (const std::bad_alloc&) {
    std::cerr << "fitspeed: out of memory\n";
    return static_cast<int>(fitspeed::cli::ExitCode::kInternal);
  } catch (const std::exception& e) {
    std::cerr << "fitspeed: internal error: " << e.what() << "\n";
    return static_cast<int>(fitspeed::cli::ExitCode::kInternal);
  }
  return exit_code;
}

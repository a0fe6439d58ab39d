// The options of `fitspeed sweep` in its three modes (docs/design.md, "CLI
// contract"): `sweep host` (the step run on this CPU), `sweep device` (modeled
// on a catalogued device) and `sweep llm` (one transformer split). One table
// (sweep_options.cc) says which mode takes which option and with which help:
// each mode's subcommand is built from it, and so is `sweep MODEL ...`, the
// spelling of earlier versions, which takes every option, picks the mode from
// what was given and refuses what that mode does not take.
#ifndef FITSPEED_TOOLS_FITSPEED_SWEEP_OPTIONS_H_
#define FITSPEED_TOOLS_FITSPEED_SWEEP_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "command.h"
#include "fitspeed/scenario/llm.h"
#include "fitspeed/scenario/sweep.h"
#include "llm_cli.h"

namespace fitspeed::cli {

// The modes, as bits: a table row names the modes that take it.
enum SweepMode : unsigned { kHostMode = 1, kDeviceMode = 2, kLlmMode = 4 };
constexpr unsigned kEveryMode = kHostMode | kDeviceMode | kLlmMode;
// "host", "device" or "llm".
const char* SweepModeName(unsigned mode);

// Every value a sweep option sets, as written on the command line; a mode's
// request is made from it (To*Request). Empty strings and negative numbers
// mean "not given" where the mode's default depends on other options.
struct SweepValues {
  std::string model;
  int64_t seq_len = 0;
  double mean_tokens = 0, mean_square_tokens = 0;
  int64_t head_positions = 0;
  std::string batches = "auto";
  int64_t max_batch = 4096;
  std::string precision;  // empty: the mode's default
  std::string optimizer = "sgd-momentum";
  bool layers = false;
  // Host.
  std::string backend = "onednn";
  int threads = 0, warmup = 2, min_repeats = 5;
  double min_time_s = 0.5, memory_limit_gib = 0;
  DataParallelCliOptions data_parallel;
  // Device and LLM.
  std::string device, links;
  double interval_level = 0.8;
  int devices = 0;  // 0: not given (device: 1; llm: tp x pp x cp)
  int devices_per_node = 0;
  // Device.
  std::string framework, from, from_device, intervals, layout, attention, amp_ops, fuse;
  bool overlap = false;
  int steps_per_execution = 1, accumulation = 1;
  double input_rate = 0;
  std::string recompute;  // "": not given; bare --recompute: "full"
  // LLM.
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, etp = 0, zero = -1;  // zero -1: the framework's
  bool overlap_moe_comm = false;
  bool tp_comm_overlap = false;
  int shard_group = 0;  // 0: every data-parallel rank
  int64_t micro_batch = 1, global_batch = 0;
  bool sequence_parallel = false, no_overlap_grad_reduce = false;
  LlmTrainingCliOptions training;
  // Every mode.
  FitCliOptions fit;
  std::string output = "table", plot_path, progress;
};

// Adds every option of the table that `modes` take to `command`, bound to
// `values`, each with the help of its mode (all of them for `sweep MODEL`);
// returns each option's name with the modes that take it.
using SweepOptionModes = std::vector<std::pair<const CLI::Option*, unsigned>>;
SweepOptionModes AddSweepOptions(CLI::App& command, SweepValues& values, unsigned modes);

// `sweep MODEL ...`: the mode the options given choose (llm with a split
// option or a transformer MODEL, device with --device, else host); a
// UsageError for each option given that the mode does not take.
unsigned ChooseSweepMode(const SweepValues& values, const SweepOptionModes& modes);

HostSweepRequest ToHostRequest(const SweepValues& values);
DeviceSweepRequest ToDeviceRequest(const SweepValues& values);
LlmStepRequest ToLlmRequest(const SweepValues& values);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_SWEEP_OPTIONS_H_

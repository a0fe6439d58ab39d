// Sweeps as requests (fitspeed/scenario/answer.h): a network's training step
// timed on this CPU at many batches (HostSweepRequest), or modeled on a
// catalogued device (DeviceSweepRequest), then fitted to v(b) = b/(b/v0 + t).
// `fitspeed sweep host` and `fitspeed sweep device`, and the Python module's
// sweep() and model(), fill these and print what Run() returns.
#ifndef FITSPEED_SCENARIO_SWEEP_H_
#define FITSPEED_SCENARIO_SWEEP_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/calibrate/transfer_run.h"
#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/model/network.h"
#include "fitspeed/model/zoo.h"
#include "fitspeed/scenario/answer.h"
#include "fitspeed/timing/sweep.h"

namespace fitspeed {

// "auto" (empty: the sweep chooses), "1,2,4,8", or "A:B" (A, 2A, 4A, ... up to
// B). UsageError naming `option` for a batch < 1, above kMaxSweepBatch (2^30,
// fitspeed/core/sample.h), B < A,
// or text that is not a list of integers.
std::vector<int64_t> ParseBatchList(const std::string& text, const std::string& option);

struct HostSweepAnswer;

// `fitspeed sweep host MODEL`: the real training step (forward, backward,
// optimizer update) run with oneDNN on this CPU at every batch, then fitted.
struct HostSweepRequest {
  // A zoo network (ZooNames(), `fitspeed models`) or a fitspeed.network/1 file. Required.
  std::string model;
  // Tokens per sequence of a sequence model (bert-*, gpt2*, tinyllama-*),
  // 1..the model's longest; 0: the model's default.
  int64_t seq_len = 0;
  // Batches, precision (fp32 or bf16), optimizer, backend, threads, repeats,
  // memory limit and the progress callback (fitspeed/timing/sweep.h).
  SweepOptions options;
  // How the step times are fitted (fitspeed/fit/fit.h).
  FitOptions fit;
  // The report also lists the per-layer times at the largest batch.
  bool layers = false;

  // UsageError naming the field, its value and the rule it broke.
  void Validate() const;
  // Validate(), load the network, sweep, fit. InputError / DataError for a
  // network file that cannot be read.
  HostSweepAnswer Run() const;
};

struct HostSweepAnswer : Answer {
  SweepResult sweep;
  FitResult fit;  // empty when fewer than two batches were measured
  bool layers = false;

  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
  void WriteHtml(std::ostream& out) const override;
  // "<network> on <cpu> (<precision>, <n> threads)": the title of its plot.
  std::string Title() const;
};

struct DeviceSweepAnswer;

// `fitspeed sweep device MODEL --device D`: the step modeled on a catalogued
// device (fitspeed/device/step_model.h) at every batch, fitted, with the
// model's prediction interval from its out-of-sample errors on published cases.
struct DeviceSweepRequest {
  // A zoo network or a fitspeed.network/1 file. Required.
  std::string model;
  // Sequence length, unpadded tokens and BERT's masked positions (ZooOptions);
  // zoo networks only.
  ZooOptions zoo;
  // A catalog device (`fitspeed devices`) or a fitspeed.device/1 file. Required.
  std::string device;
  // A fitspeed.links/1 file whose links replace the device's links that
  // connect the same thing; empty: the device's own.
  std::string links;
  // A framework profile (pytorch, tensorflow, mxnet, keras, paddlepaddle,
  // caffe; FindFrameworkProfile) applied to the device; empty: none. It sets
  // the interval's basis to the profiles' errors on GPUs they were not fitted on.
  std::string framework;
  // Batches, precision, data parallelism, accumulation, layout, attention,
  // recomputation, input rate (fitspeed/device/step_model.h). Its amp_ops and
  // fusion are replaced by the two fields below.
  DeviceModelOptions options;
  // The layers mixed precision keeps in FP32; not set: the framework's
  // (FrameworkAmpOps: tensorflow for tensorflow and keras, else pytorch).
  std::optional<AmpOpList> amp_ops;
  // Element-wise work fused into batch norms; not set: the framework's
  // (FrameworkFusion: bn-relu-add for mxnet in mixed precision, else none).
  std::optional<ElementwiseFusion> fusion;
  // Transfer from the user's own run (docs/devices.md, "Transfer from your own
  // run"): a measurement of `model` on `from_device` (a catalog name, `host`,
  // or a device file) given as a training log PATH[@key=value,...], a cases
  // CSV or a host sweep CSV calibrates the step model (CalibrateFromRun), and
  // `device` is modeled with what carries over; the interval is then that of
  // transferred predictions. Empty: none. Not with `framework` or unpadded
  // sequences.
  std::string from;
  std::string from_device;
  // Whether `options.precision` and `options.layout` were stated by the user:
  // a transfer checks the measurement against what was stated and takes the
  // rest from the measurement's attributes.
  bool precision_stated = false;
  bool layout_stated = false;
  // A fitspeed.intervals/1 file instead of the built-in errors; empty: built in.
  std::string intervals;
  // Level of the prediction interval on every modeled number, in (0, 1).
  double interval_level = 0.8;
  // How the modeled step times are fitted.
  FitOptions fit;
  // The report also lists the per-layer times at the largest batch.
  bool layers = false;

  // UsageError naming the field, its value and the rule it broke.
  void Validate() const;

  // What Run() models: the network, the device with the links and the
  // framework profile applied, the options with amp_ops and fusion resolved,
  // and the notes saying where each link and profile came from.
  struct Setup {
    Network network;
    Device device;
    DeviceModelOptions options;
    std::vector<std::string> notes;
  };
  // Validate(), then load and apply. InputError / DataError for files that
  // cannot be read, UsageError for an unknown network, device or framework.
  Setup Prepare() const;
  // Prepare(), model every batch, fit, attach the interval.
  DeviceSweepAnswer Run() const;
};

struct DeviceSweepAnswer : Answer {
  // With `from`: the measurement read and the calibration carried to the device.
  std::optional<TransferRun> transfer;
  DeviceSweepResult sweep;
  FitResult fit;  // empty when fewer than two batches fit in memory
  PredictionInterval interval;
  bool layers = false;

  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
  void WriteHtml(std::ostream& out) const override;
  // "<network> modeled on <device> (<precision>, <n> devices)".
  std::string Title() const;
};

// The usable flag, problem and note of a sweep that measured or modeled
// `fitted` batches (`all_fitted`: none was skipped or out of memory): one
// batch alone is a measurement, fine when it was the only one asked for;
// fewer than two cannot be fitted; a fit with an unusable group is not usable.
void JudgeSweep(size_t fitted, bool all_fitted, const FitResult& fit, Answer& answer);

}  // namespace fitspeed

#endif  // FITSPEED_SCENARIO_SWEEP_H_

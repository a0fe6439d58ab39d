// Measured training cases of zoo networks on catalogued devices: what the
// device model is calibrated on (fitspeed calibrate) and validated against
// (fitspeed validate). One case is one published or user-measured throughput.
#ifndef FITSPEED_CALIBRATE_CASES_H_
#define FITSPEED_CALIBRATE_CASES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {

struct MeasuredCase {
  std::string network;  // zoo name ("resnet50") or a network JSON path
  std::string device;   // catalog name ("v100-sxm2") or a device JSON path
  Precision precision = Precision::kFp32;
  int devices = 1;  // data-parallel devices
  // Devices per node (DeviceModelOptions::devices_per_node); 0: all in one node.
  int devices_per_node = 0;
  int64_t batch = 0;          // global batch per step (all devices)
  double throughput_sps = 0;  // measured samples/s, all devices together, > 0
  // The framework's activation layout (matters for tensor-unit convolutions
  // on a device with a tensor_layout); nchw when the source does not say.
  ActivationLayout layout = ActivationLayout::kNchw;
  // The optimizer the run used, when the source says (its update is part of
  // the step); unset: the validation's or calibration's optimizer.
  std::optional<Optimizer> optimizer;
  // Tokens per sequence of a zoo sequence model (ZooOptions::seq_len); 0: the
  // model's default, or not a sequence model.
  int64_t seq_len = 0;
  // Unpadded sequences and BERT's masked-LM positions (ZooOptions::mean_tokens,
  // mean_square_tokens, head_positions); 0: padded to seq_len, the defaults.
  double mean_tokens = 0;
  double mean_square_tokens = 0;
  int64_t head_positions = 0;
  // Gradient accumulation: micro-batches of `batch` per optimizer step
  // (DeviceModelOptions::accumulation), >= 1.
  int accumulation = 1;
  // Element-wise work the run's framework fused into its batch norms, as its
  // configuration documents (DeviceModelOptions::fusion); kNone when not known.
  ElementwiseFusion fusion = ElementwiseFusion::kNone;
  // How the run's attention cores ran (DeviceModelOptions::attention), as its
  // configuration documents; kUnfused when not known.
  AttentionKernel attention = AttentionKernel::kUnfused;
  // The layers mixed precision keeps in FP32 (DeviceModelOptions::amp_ops), as
  // the run's code documents it; unset: the framework's autocast list
  // (TensorFlow's for tensorflow and keras, else PyTorch's).
  std::optional<AmpOpList> amp_ops;
  std::string framework;  // "pytorch", "tensorflow", "mxnet", "paddle", ... ("" unknown)
  std::string source;     // file the number was read from
  int line = 0;           // its 1-based line in `source`
  std::string note;       // what was assumed to read it (free text)
};

// "network/device/precision/devicesxN/bN", e.g. "resnet50/v100-sxm2/fp32/x1/b256":
// the identity of a case, as a calibrated device file lists the cases it was
// fitted to (Device::calibrated_on). A sequence length adds "/sN" after the
// network, gradient accumulation "/aN" at the end:
// "bert-large/s128/v100-sxm2/mixed/x1/b16/a4096".
std::string CaseKey(const MeasuredCase& c);

// The network of a case as the zoo builds it (its seq_len, unpadded tokens and
// head positions), and a name for it that tells such networks apart
// ("bert-large/s128"; unpadded "bert-large/s512/u254.4,86312/h38": mean and
// mean square tokens, head positions).
ZooOptions CaseZooOptions(const MeasuredCase& c);
std::string CaseNetworkKey(const MeasuredCase& c);

// The options that model a case: its precision, layout, devices and
// optimizer, `default_optimizer` when the case records none.
// src/calibrate/cases.cc.
DeviceModelOptions CaseModelOptions(const MeasuredCase& c, Optimizer default_optimizer);

// A user's cases: CSV with the header
//   network,device,precision,devices,batch,throughput_sps[,framework][,layout][,optimizer][,fusion][,note]
// (docs/devices.md). Throws DataError naming file, line and field.
// src/calibrate/cases_csv.cc.
std::vector<MeasuredCase> ReadCasesCsv(const std::string& path);

// Cases split by device (`calibrate`): `used`, those whose device is one of
// `names` (device names, or names as written for them, a device file's path),
// and `skipped`, the others; each in input order.
struct CaseSelection {
  std::vector<MeasuredCase> used;
  std::vector<MeasuredCase> skipped;
};
CaseSelection SelectCasesOf(std::vector<MeasuredCase> cases, const std::vector<std::string>& names);

// The cases counted per device, in name order: "t4 (19), v100-sxm2 (2)".
std::string CountByDevice(const std::vector<MeasuredCase>& cases);

// Whether the first line of the file at `path` that is neither blank nor a
// '#' comment is a cases CSV header: it names network, device and
// throughput_sps columns (any case, quotes and blanks around names ignored).
// False for "-" (standard input) and a file that cannot be read.
bool LooksLikeCasesCsv(const std::string& path);

}  // namespace fitspeed

#endif  // FITSPEED_CALIBRATE_CASES_H_

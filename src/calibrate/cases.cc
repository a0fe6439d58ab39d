// What a measured case names and how it is modeled (fitspeed/calibrate/cases.h).
#include "fitspeed/calibrate/cases.h"

#include <fmt/format.h>

namespace fitspeed {

std::string CaseNetworkKey(const MeasuredCase& c) {
  std::string key = c.seq_len > 0 ? fmt::format("{}/s{}", c.network, c.seq_len) : c.network;
  if (c.mean_tokens > 0) key += fmt::format("/u{:.4g},{:.6g}", c.mean_tokens, c.mean_square_tokens);
  if (c.head_positions > 0) key += fmt::format("/h{}", c.head_positions);
  return key;
}

ZooOptions CaseZooOptions(const MeasuredCase& c) {
  return ZooOptions{c.seq_len, c.mean_tokens, c.mean_square_tokens, c.head_positions};
}

std::string CaseKey(const MeasuredCase& c) {
  std::string key = fmt::format("{}/{}/{}/x{}/b{}", CaseNetworkKey(c), c.device,
                                PrecisionName(c.precision), c.devices, c.batch);
  if (c.accumulation > 1) key += fmt::format("/a{}", c.accumulation);
  return key;
}

DeviceModelOptions CaseModelOptions(const MeasuredCase& c, Optimizer default_optimizer) {
  DeviceModelOptions o;
  o.precision = c.precision;
  o.layout = c.layout;
  o.devices = c.devices;
  o.devices_per_node = c.devices_per_node;
  o.attention = c.attention;
  o.accumulation = c.accumulation;
  o.optimizer = c.optimizer.value_or(default_optimizer);
  // Keras runs on TensorFlow: its AMP keeps TensorFlow's ops in FP32.
  o.amp_ops = c.amp_ops.value_or(c.framework == "tensorflow" || c.framework == "keras"
                                     ? AmpOpList::kTensorFlow
                                     : AmpOpList::kPyTorch);
  o.fusion = c.fusion;
  return o;
}

}  // namespace fitspeed

// Multiply-adds of a network's matrix work, as published MAC counts give them.
#ifndef FITSPEED_TESTS_MODEL_MATMUL_MACS_H_
#define FITSPEED_TESTS_MODEL_MATMUL_MACS_H_

#include <cstddef>

#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"

namespace fitspeed::test {

// Forward multiply-adds of the convolutions and dense layers only (without
// bias adds): what published MAC counts measure.
inline double MatmulMacs(const Network& net) {
  const NetworkCost cost = CountCost(net);
  double macs = 0;
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    if (layer.kind != LayerKind::kConv2d && layer.kind != LayerKind::kDense) continue;
    const bool bias = layer.kind == LayerKind::kConv2d ? layer.conv.bias : layer.dense.bias;
    const double bias_adds = bias ? static_cast<double>(layer.output_shape.elements()) : 0;
    macs += (cost.layers[static_cast<size_t>(id)].forward.flops.per_sample - bias_adds) / 2;
  }
  return macs;
}

}  // namespace fitspeed::test

#endif  // FITSPEED_TESTS_MODEL_MATMUL_MACS_H_

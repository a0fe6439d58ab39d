// Short builders of layer attributes for the model tests' hand-made networks.
#ifndef FITSPEED_TESTS_MODEL_ATTRS_UTIL_H_
#define FITSPEED_TESTS_MODEL_ATTRS_UTIL_H_

#include <cstdint>

#include "fitspeed/model/network.h"

namespace fitspeed::test {

inline Conv2dAttrs Conv(int64_t out_channels, Window2d window, bool bias = true,
                        int64_t groups = 1) {
  Conv2dAttrs a;
  a.out_channels = out_channels;
  a.window = window;
  a.bias = bias;
  a.groups = groups;
  return a;
}

inline DenseAttrs Units(int64_t units) {
  DenseAttrs a;
  a.units = units;
  return a;
}

inline PoolAttrs Pool(Window2d window) {
  PoolAttrs a;
  a.window = window;
  return a;
}

}  // namespace fitspeed::test

#endif  // FITSPEED_TESTS_MODEL_ATTRS_UTIL_H_

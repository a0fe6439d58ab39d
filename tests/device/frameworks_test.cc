// What a framework named with `sweep --device D --framework F` does beyond its
// profile's numbers (fitspeed/device/frameworks.h): its AMP op list and its
// element-wise fusion.
#include "fitspeed/device/frameworks.h"

#include <gtest/gtest.h>

namespace fitspeed {
namespace {

TEST(FrameworkAmpOps, TensorFlowAndKerasKeepTensorFlowsOpsInFp32) {
  // Keras runs on TensorFlow, so its AMP graph rewrite is TensorFlow's.
  EXPECT_EQ(FrameworkAmpOps("tensorflow"), AmpOpList::kTensorFlow);
  EXPECT_EQ(FrameworkAmpOps("keras"), AmpOpList::kTensorFlow);
  // Every other framework, and none named, gets PyTorch's autocast list.
  for (const char* name : {"", "pytorch", "mxnet", "paddlepaddle", "caffe", "TensorFlow"}) {
    EXPECT_EQ(FrameworkAmpOps(name), AmpOpList::kPyTorch) << name;
  }
}

TEST(FrameworkFusion, MxnetFusesBatchNormReluAddInMixedPrecisionOnly) {
  EXPECT_EQ(FrameworkFusion("mxnet", Precision::kMixed), ElementwiseFusion::kBatchNormReluAdd);
  EXPECT_EQ(FrameworkFusion("mxnet", Precision::kFp32), ElementwiseFusion::kNone);
  EXPECT_EQ(FrameworkFusion("mxnet", Precision::kTf32), ElementwiseFusion::kNone);
  for (const char* name : {"", "pytorch", "tensorflow", "keras"}) {
    EXPECT_EQ(FrameworkFusion(name, Precision::kMixed), ElementwiseFusion::kNone) << name;
  }
}

}  // namespace
}  // namespace fitspeed

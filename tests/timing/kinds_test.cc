// Every LayerKind is run by a network that the backend tests check against
// finite differences and against each other (eigen_executor_test,
// onednn_executor_test, new_kinds_test, transformer_kinds_test). That each
// backend has a builder for every kind is checked when it compiles
// (InKindOrder in eigen_executor.cc and onednn_executor.cc).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "timing/executor.h"
#include "timing/test_networks.h"

namespace fitspeed::timing {
namespace {

TEST(Kinds, EveryKindRunsInATestNetworkOfBothBackends) {
  std::set<LayerKind> used;
  for (const auto& networks :
       {fitspeed::testing::AllTestNetworks(), fitspeed::testing::NewKindTestNetworks(),
        fitspeed::testing::TransformerTestNetworks()}) {
    for (const Network& net : networks) {
      for (const Layer& layer : net.layers()) used.insert(layer.kind);
    }
  }
  for (int k = 0; k < kLayerKindCount; ++k) {
    const LayerKind kind = static_cast<LayerKind>(k);
    EXPECT_EQ(used.count(kind), 1u) << LayerKindName(kind) << " is in no backend test network";
  }
}

}  // namespace
}  // namespace fitspeed::timing

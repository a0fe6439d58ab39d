// Every LayerKind has its rules in src/model/kinds/, including those with no
// default: the host backends' operand ranks and the device traits.
#include <gtest/gtest.h>

#include <string>

#include "fitspeed/model/network.h"
#include "model/kinds/kind.h"

namespace fitspeed::kinds {
namespace {

TEST(KindRules, EveryKindHasItsRulesAndTraits) {
  ASSERT_EQ(AllRules().size(), static_cast<size_t>(kLayerKindCount));
  for (int k = 0; k < kLayerKindCount; ++k) {
    const LayerKind kind = static_cast<LayerKind>(k);
    const KindRules& rules = RulesOf(kind);
    SCOPED_TRACE(rules.name);
    EXPECT_EQ(rules.kind, kind);
    EXPECT_STRNE(rules.name, "");
    EXPECT_TRUE(LayerKindFromName(rules.name) == kind);
    EXPECT_FALSE(rules.host_ranks.empty());
    EXPECT_TRUE(rules.device.has_value());
    // Every kind but the input (shaped by the network) has a shape rule.
    EXPECT_EQ(rules.shape == nullptr, kind == LayerKind::kInput);
  }
}

TEST(KindRules, DeviceTraitsOfTheRowNormalizingKinds) {
  // docs/devices.md, "Step model": the normalization memory curve is for the
  // kernels that reduce each row before writing it; batch norm reduces over
  // the batch and stays element-wise.
  for (const KindRules& rules : AllRules()) {
    const bool rows = rules.kind == LayerKind::kLayerNorm || rules.kind == LayerKind::kRmsNorm ||
                      rules.kind == LayerKind::kSoftmax ||
                      rules.kind == LayerKind::kSoftmaxCrossEntropy;
    EXPECT_EQ(rules.device->normalizes_rows, rows) << rules.name;
  }
}

}  // namespace
}  // namespace fitspeed::kinds

// The table of kinds and the helpers their rules share.
#include <fmt/format.h>

#include <algorithm>

#include "fitspeed/core/error.h"
#include "kind.h"

namespace fitspeed::kinds {

std::string LayerField(int id, const std::string& name) {
  return fmt::format("layers[{}] \"{}\"", id, name);
}

LayerChecker::LayerChecker(const std::string& origin, int id, const Layer& layer)
    : origin_(origin), line_(layer.origin_line), field_(LayerField(id, layer.name)) {}

void LayerChecker::Fail(const std::string& problem) const {
  throw DataError(origin_, line_, field_, problem);
}

void LayerChecker::RequireRank(const Shape& in, const std::vector<int>& ranks,
                               const char* what) const {
  if (std::find(ranks.begin(), ranks.end(), in.rank()) == ranks.end()) {
    Fail(fmt::format("input shape {} is not {}", in.ToString(), what));
  }
}

void LayerChecker::RequirePositive(double value, const char* attribute) const {
  Require(value > 0 && std::isfinite(value), fmt::format("{} {} must be > 0", attribute, value));
}

bool ProductInRange(const std::vector<int64_t>& factors) {
  int64_t n = 1;
  for (int64_t d : factors) {
    if (d < 1 || d > kMaxElements / n) return false;
    n *= d;
  }
  return true;
}

bool CostContext::GradTo(size_t k) const {
  return grads[static_cast<size_t>(layer.input_ids.at(k))];
}

double CostContext::InElements(size_t k) const { return Elements(InShape(k)); }

const Shape& CostContext::InShape(size_t k) const {
  return net.layer(layer.input_ids.at(k)).output_shape;
}

double ParamElements(const Layer& layer, const std::string& name) {
  double n = 0;
  for (const ParamTensor& p : layer.params) {
    if (p.name == name) n += Elements(p.shape);
  }
  return n;
}

const std::vector<KindRules>& AllRules() {
  // In LayerKind order (checked below).
  static const std::vector<KindRules> rules = [] {
    std::vector<KindRules> r = {
        InputRules(),
        Conv2dRules(),
        DenseRules(),
        BatchNormRules(),
        ReluRules(),
        AvgPoolRules(),
        MaxPoolRules(),
        GlobalAvgPoolRules(),
        AddRules(),
        FlattenRules(),
        SoftmaxCrossEntropyRules(),
        SigmoidRules(),
        SwishRules(),
        MulRules(),
        ConcatRules(),
        LrnRules(),
        EmbeddingRules(),
        PositionEmbeddingRules(),
        SegmentEmbeddingRules(),
        LayerNormRules(),
        RmsNormRules(),
        GeluRules(),
        TanhRules(),
        DropoutRules(),
        SplitHeadsRules(),
        MergeHeadsRules(),
        BatchedMatmulRules(),
        SoftmaxRules(),
        RotaryRules(),
        SelectTokenRules(),
        GatherTokensRules(),
        ClassTokenRules(),
        ImageToSequenceRules(),
    };
    for (size_t i = 0; i < r.size(); ++i) {
      FITSPEED_CHECK(static_cast<size_t>(r[i].kind) == i,
                     fmt::format("kind rules '{}' out of LayerKind order", r[i].name));
    }
    return r;
  }();
  return rules;
}

const KindRules& RulesOf(LayerKind kind) {
  const std::vector<KindRules>& rules = AllRules();
  const size_t i = static_cast<size_t>(kind);
  FITSPEED_CHECK(i < rules.size(), "layer kind without rules");
  return rules[i];
}

}  // namespace fitspeed::kinds

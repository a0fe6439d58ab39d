// The table of kinds and the helpers their rules share.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

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
  // Every kind once, in LayerKind order, with the rules that have no default.
  static const std::vector<KindRules> rules = [] {
    std::vector<std::optional<KindRules>> slots(kLayerKindCount);
    for (auto family :
         {AttentionKinds, DenseKinds, ElementwiseKinds, ImageKinds, LossKinds, NormKinds}) {
      for (KindRules& k : family()) {
        const size_t i = static_cast<size_t>(k.kind);
        FITSPEED_CHECK(i < slots.size(), fmt::format("kind rules '{}': LayerKind {} is not below "
                                                     "kLayerKindCount",
                                                     k.name, i));
        FITSPEED_CHECK(!slots[i], fmt::format("kind rules '{}' given twice", k.name));
        FITSPEED_CHECK(!k.host_ranks.empty(), fmt::format("kind '{}' lists no host ranks", k.name));
        FITSPEED_CHECK(k.device.has_value(), fmt::format("kind '{}' has no device traits", k.name));
        slots[i] = std::move(k);
      }
    }
    std::vector<KindRules> r;
    for (size_t i = 0; i < slots.size(); ++i) {
      FITSPEED_CHECK(slots[i].has_value(), fmt::format("LayerKind {} has no rules", i));
      r.push_back(std::move(*slots[i]));
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

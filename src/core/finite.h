// Numbers read, given or written: checks that one is finite and positive or
// not negative, and a number as fitspeed's JSON writers write it.
#ifndef FITSPEED_SRC_CORE_FINITE_H_
#define FITSPEED_SRC_CORE_FINITE_H_

#include <cmath>
#include <optional>

namespace fitspeed {

inline bool PositiveFinite(double x) { return std::isfinite(x) && x > 0; }
inline bool NonNegativeFinite(double x) { return std::isfinite(x) && x >= 0; }

// `x` as a JSON value: the number when finite, null otherwise, since JSON has
// no NaN or infinity (docs/design.md, "Schemas"). nlohmann's dump() would
// print a NaN number as null too, but the value in memory would still be a
// number, not null, for a caller that reads the document (ToJson, Python).
// Json is nlohmann::json or nlohmann::ordered_json; the caller includes it.
template <class Json>
Json FiniteOrNull(double x) {
  return std::isfinite(x) ? Json(x) : Json(nullptr);
}
// An optional number: null when absent too.
template <class Json>
Json FiniteOrNull(const std::optional<double>& x) {
  return x ? FiniteOrNull<Json>(*x) : Json(nullptr);
}

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_FINITE_H_

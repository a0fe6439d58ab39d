// bfloat16 rounding: the 8 significant bits (7 stored) of a float's 24, as
// oneDNN's f32 -> bf16 conversion does it (round to nearest, ties to even;
// NaN stays NaN).
#ifndef FITSPEED_TIMING_BF16_H_
#define FITSPEED_TIMING_BF16_H_

#include <cmath>
#include <cstdint>
#include <cstring>

namespace fitspeed::timing {

// The float nearest to x with a zero low half, i.e. x rounded to bf16.
inline float RoundToBf16(float x) {
  if (std::isnan(x)) return x;
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; a
  // carry out of the mantissa correctly bumps the exponent (up to infinity).
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  float y = 0;
  std::memcpy(&y, &bits, sizeof y);
  return y;
}

}  // namespace fitspeed::timing

#endif  // FITSPEED_TIMING_BF16_H_

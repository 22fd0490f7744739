// SPDX-License-Identifier: Apache-2.0
// binary16 references for the KV cache tests, written from the format's definition (IEEE 754-2008: 1 sign, 5
// exponent bits biased by 15, 10 mantissa bits; subnormals m 2^-24) with double arithmetic, independently of the
// library's integer conversion.
#ifndef EDGEATTN_TESTS_HALF_REFERENCE_H_
#define EDGEATTN_TESTS_HALF_REFERENCE_H_

#include <stdint.h>

#include <algorithm>
#include <cmath>

namespace edgeattn_test {

// Value of binary16 bits h.
inline double RefHalfValue(uint16_t h) {
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  if (e == 31) return m == 0 ? sign * HUGE_VAL : std::nan("");
  if (e == 0) return sign * std::ldexp(static_cast<double>(m), -24);
  return sign * std::ldexp(static_cast<double>(1024 + m), e - 25);
}

// x rounded to the nearest binary16 value (ties to even), +-inf from 65520 up.
inline double RefRoundToHalf(float x) {
  if (std::isnan(x)) return std::nan("");
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return std::copysign(HUGE_VAL, static_cast<double>(x));
  int e;
  std::frexp(a, &e);                        // a = f 2^e, f in [0.5, 1): the leading bit is 2^(e-1)
  const int binade = std::max(e - 1, -14);  // subnormal halves share the 2^-14 binade's spacing
  const double ulp = std::ldexp(1.0, binade - 10);
  const double r = std::nearbyint(a / ulp) * ulp;  // a / ulp is exact; nearbyint rounds half to even
  return std::copysign(r, static_cast<double>(x));
}

inline bool SameHalf(float x, uint16_t got) {
  const double want = RefRoundToHalf(x), have = RefHalfValue(got);
  if (std::isnan(want)) return std::isnan(have);
  return want == have && std::signbit(want) == std::signbit(have);
}

}  // namespace edgeattn_test

#endif  // EDGEATTN_TESTS_HALF_REFERENCE_H_

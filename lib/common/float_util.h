// SPDX-License-Identifier: Apache-2.0
// Float helpers every kernel uses: the special values, a finiteness test that needs no <cmath>, Knuth's 2Sum,
// compensated summation and a row fill.
#ifndef EDGEATTN_LIB_COMMON_FLOAT_UTIL_H_
#define EDGEATTN_LIB_COMMON_FLOAT_UTIL_H_

#include <stddef.h>

#include <limits>

namespace edgeattn {
namespace internal {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kQuietNaN = std::numeric_limits<float>::quiet_NaN();

inline bool IsFinite(float x) { return x - x == 0.0f; }  // false for +-inf and NaN

// Rounding error of s = a + b (Knuth's 2Sum, no precondition on |a| vs |b|): a + b = s + error exactly.
inline float TwoSumError(float a, float b, float s) {
  const float bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

// sum + compensation += v, keeping the rounding error of the addition in compensation.
inline void AddCompensated(float v, float& sum, float& compensation) {
  const float next = sum + v;
  compensation += TwoSumError(sum, v, next);
  sum = next;
}

inline void FillRow(float* out, size_t n, float value) {
  for (size_t j = 0; j < n; ++j) out[j] = value;
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_FLOAT_UTIL_H_

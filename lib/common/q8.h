// SPDX-License-Identifier: Apache-2.0
// The Q8 storage format, scalar part: symmetric int8 with one float scale per group of values (a KV cache row of
// one head, or a group of group_size weights of a matrix row), scale = max|x| / 127, q = x / scale rounded to
// nearest even and clamped to [-127, 127]. One implementation for the KV cache and the int8 weights, so both give
// the same bits for the same values (docs/architecture.md, storage formats).
#ifndef EDGEATTN_LIB_COMMON_Q8_H_
#define EDGEATTN_LIB_COMMON_Q8_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace edgeattn {
namespace internal {

// x rounded to the nearest integer, ties to even, for |x| < 2^31, in any rounding mode the caller has set (a
// magic-number addition would round in that mode): the conversion to int truncates in every mode, x minus its
// truncation is exact, and comparisons with +-1/2 decide. Branch-free (the comparisons give 0 or 1): quantising
// fresh data, a branch on them mispredicted every few values (docs/performance.md, "The KV cache's Append"). The
// fraction has x's sign, so at most one of up and down is set.
inline int32_t RoundToNearestEvenInt(float x) {
  const int32_t t = static_cast<int32_t>(x);
  const float frac = x - static_cast<float>(t);
  const int32_t odd = t & 1;
  const int32_t up = static_cast<int32_t>(frac > 0.5f) | (static_cast<int32_t>(frac == 0.5f) & odd);
  const int32_t down = static_cast<int32_t>(frac < -0.5f) | (static_cast<int32_t>(frac == -0.5f) & odd);
  return t + up - down;
}

inline float RoundToNearestEven(float x) { return static_cast<float>(RoundToNearestEvenInt(x)); }

// The Q8 scale of a row of n finite floats: max|x| / 127 (a float division); 0 for an all-zero row.
inline float Q8Scale(const float* x, size_t n) {
  float max_abs = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    max_abs = a > max_abs ? a : max_abs;
  }
  return max_abs / 127.0f;
}

// x / scale (a float division) rounded to nearest even and clamped to [-127, 127] (x / scale can exceed 127 by
// the rounding of the scale). The two divisions (here and in Q8Scale) round in the caller's rounding mode: the
// stored bits are the documented ones under round-to-nearest, and within the bound in every mode. A scale that
// underflowed to 0 (max |x| below about 2^-143) stores 0: the row reads back as 0, within the documented 2^-126
// of x.
//
// The clamp comes after the rounding, on integers (selects, not branches): the same values, since r > 127 rounds to
// 127 or 128 and r < -127 to -127 or -128.
inline int8_t Q8Quantize(float x, float scale) {
  const float r = scale == 0.0f ? 0.0f : x / scale;
  int32_t q = RoundToNearestEvenInt(r);
  q = q > 127 ? 127 : q;
  q = q < -127 ? -127 : q;
  return static_cast<int8_t>(q);
}

// A group of n finite floats quantised: q[i] = Q8Quantize(x[i], scale), returns the scale (Q8Scale).
inline float Q8QuantizeGroup(const float* x, size_t n, int8_t* q) {
  const float scale = Q8Scale(x, n);
  for (size_t i = 0; i < n; ++i) q[i] = Q8Quantize(x[i], scale);
  return scale;
}

// Element e of a Q8 row (int8 values at any address) as the float the format reads back: q * scale, one float
// product (the KV cache's Read and every kernel give this value).
inline float LoadQ8Element(const unsigned char* row, size_t e, float scale) {
  int8_t q;
  memcpy(&q, row + e, sizeof(q));
  return static_cast<float>(q) * scale;
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_Q8_H_

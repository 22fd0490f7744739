// SPDX-License-Identifier: Apache-2.0
// Dot product, scalar reference: four interleaved accumulators (element i goes to accumulator i % 4), summed
// pairwise at the end. Independent accumulators let the FPU overlap additions, and each accumulator sums a
// quarter of the terms, which is also what keeps attention scores accurate for wide heads.
#ifndef EDGEATTN_LIB_DOT_DOT_SCALAR_H_
#define EDGEATTN_LIB_DOT_DOT_SCALAR_H_

#include <stddef.h>

namespace edgeattn {
namespace internal {

inline float DotScalar(const float* a, const float* b, size_t n) {
  float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (size_t k = 0; k < 4; ++k) sum[k] += a[i + k] * b[i + k];
  }
  for (; i < n; ++i) sum[i % 4] += a[i] * b[i];
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_DOT_DOT_SCALAR_H_

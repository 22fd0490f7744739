// SPDX-License-Identifier: Apache-2.0
// Linear projection, scalar reference: y row = bias, then += x[i] * W row i, in increasing i.
#ifndef EDGEATTN_LIB_LINEAR_LINEAR_SCALAR_H_
#define EDGEATTN_LIB_LINEAR_LINEAR_SCALAR_H_

#include <stddef.h>

namespace edgeattn {
namespace internal {

// The output row is the accumulator; W is read row by row (its storage order), never by column.
inline void LinearScalar(const float* x, size_t rows, size_t in, const float* w, const float* bias, size_t out,
                         float* y) {
  for (size_t r = 0; r < rows; ++r) {
    float* y_row = y + r * out;
    for (size_t o = 0; o < out; ++o) y_row[o] = bias != nullptr ? bias[o] : 0.0f;
    for (size_t i = 0; i < in; ++i) {
      const float xi = x[r * in + i];
      const float* w_row = w + i * out;
      for (size_t o = 0; o < out; ++o) y_row[o] += xi * w_row[o];
    }
  }
}

// y = x W^T + bias, W stored [out][in]: each output is a dot product of two contiguous rows, summed in four
// interleaved accumulators (as dot_scalar.h) with the bias added last.
inline void LinearTransposedScalar(const float* x, size_t rows, size_t in, const float* w, const float* bias,
                                   size_t out, float* y) {
  for (size_t r = 0; r < rows; ++r) {
    const float* x_row = x + r * in;
    for (size_t o = 0; o < out; ++o) {
      const float* w_row = w + o * in;
      float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      size_t i = 0;
      for (; i + 4 <= in; i += 4) {
        for (size_t k = 0; k < 4; ++k) sum[k] += x_row[i + k] * w_row[i + k];
      }
      for (; i < in; ++i) sum[i % 4] += x_row[i] * w_row[i];
      const float dot = (sum[0] + sum[1]) + (sum[2] + sum[3]);
      y[r * out + o] = bias != nullptr ? bias[o] + dot : dot;
    }
  }
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_LINEAR_LINEAR_SCALAR_H_

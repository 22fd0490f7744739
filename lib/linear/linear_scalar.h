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

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_LINEAR_LINEAR_SCALAR_H_

// SPDX-License-Identifier: Apache-2.0
// Linear projections on Helium (MVE). Contract: linear.h (both kernels), with the flush-to-zero underflow term
// (in_features + 1) * 2^-126, since MVE flushes (lib/common/mve.h). Each product is fused into its sum (VFMA: one
// rounding where the scalar path has two), which the bound covers. No stack buffer; tails are predicated, so
// nothing past the end of x, weight, bias or y is read or written.
#ifndef EDGEATTN_LIB_LINEAR_LINEAR_MVE_H_
#define EDGEATTN_LIB_LINEAR_LINEAR_MVE_H_

#include "lib/common/mve.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// y row r, outputs [o, o + count) with count <= 4 vectors' worth: starts from the bias and adds x[r][i] * W[i][.]
// in increasing i (linear.h's order). kVectors accumulators stay in Q registers for the whole row of W; the last
// of them is predicated when count is not a multiple of 4.
template <size_t kVectors>
inline void LinearBlock(const float* x_row, size_t in, const float* w, const float* bias, size_t out, size_t o,
                        size_t count, float* y_row) {
  float32x4_t acc[kVectors];
  for (size_t k = 0; k < kVectors; ++k) {
    const size_t lanes = count - k * kLanes < kLanes ? count - k * kLanes : kLanes;
    acc[k] = bias == nullptr ? vdupq_n_f32(0.0f) : LoadTail(bias + o + k * kLanes, lanes);
  }
  for (size_t i = 0; i < in; ++i) {
    const float* w_row = w + i * out + o;
    for (size_t k = 0; k < kVectors; ++k) {
      const size_t lanes = count - k * kLanes < kLanes ? count - k * kLanes : kLanes;
      acc[k] = vfmaq_n_f32(acc[k], LoadLanes(w_row + k * kLanes, lanes), x_row[i]);
    }
  }
  for (size_t k = 0; k < kVectors; ++k) {
    const size_t lanes = count - k * kLanes < kLanes ? count - k * kLanes : kLanes;
    StoreLanes(y_row + o + k * kLanes, acc[k], lanes);
  }
}

// y = x W + bias, W stored [in][out]: per row, blocks of 16 outputs (four accumulators), then one vector at a
// time, the last predicated.
inline void LinearMve(const float* x, size_t rows, size_t in, const float* w, const float* bias, size_t out, float* y) {
  for (size_t r = 0; r < rows; ++r) {
    const float* x_row = x + r * in;
    float* y_row = y + r * out;
    size_t o = 0;
    for (; o + 4 * kLanes <= out; o += 4 * kLanes) LinearBlock<4>(x_row, in, w, bias, out, o, 4 * kLanes, y_row);
    for (; o < out; o += kLanes) {
      LinearBlock<1>(x_row, in, w, bias, out, o, out - o < kLanes ? out - o : kLanes, y_row);
    }
  }
}

// kOutputs dot products of x_row with rows w[0 .. kOutputs) of `in` floats each (rows of W, or keys of a KV tile),
// each in 4 lane partial sums (lane l sums i = l mod 4, the scalar path's four accumulators), the x vector loaded
// once for all of them. Each row has its own pointer, advanced by the loop: GCC 12 then uses post-indexed loads
// instead of recomputing every address from the index.
template <size_t kOutputs>
inline void DotRowPtrs(const float* x_row, const float* const* w_rows, size_t in, float* dots) {
  float32x4_t acc[kOutputs];
  const float* w[kOutputs];
  for (size_t k = 0; k < kOutputs; ++k) acc[k] = vdupq_n_f32(0.0f), w[k] = w_rows[k];
  const float* x = x_row;
  for (const float* const end = x_row + in / kLanes * kLanes; x != end; x += kLanes) {
    const float32x4_t xv = vldrwq_f32(x);
    for (size_t k = 0; k < kOutputs; ++k) {
      acc[k] = vfmaq_f32(acc[k], xv, vldrwq_f32(w[k]));
      w[k] += kLanes;
    }
  }
  const size_t rest = in % kLanes;
  if (rest != 0) {
    const float32x4_t xv = LoadTail(x, rest);
    for (size_t k = 0; k < kOutputs; ++k) acc[k] = vfmaq_f32(acc[k], xv, LoadTail(w[k], rest));
  }
  for (size_t k = 0; k < kOutputs; ++k) dots[k] = SumLanes(acc[k]);
}

// Rows o, o + 1, ... of W stored [out][in].
template <size_t kOutputs>
inline void DotRows(const float* x_row, const float* w_rows, size_t in, float* dots) {
  const float* w[kOutputs];
  for (size_t k = 0; k < kOutputs; ++k) w[k] = w_rows + k * in;
  DotRowPtrs<kOutputs>(x_row, w, in, dots);
}

// y = x W^T + bias, W stored [out][in], outputs [o_begin, o_end) of each row (a part of LinearTransposedPart, or
// all): four outputs per pass over x's row, the bias added last.
inline void LinearTransposedMve(const float* x, size_t rows, size_t in, const float* w, const float* bias, size_t out,
                                size_t o_begin, size_t o_end, float* y) {
  for (size_t r = 0; r < rows; ++r) {
    const float* x_row = x + r * in;
    float* y_row = y + r * out;
    float dots[4];
    size_t o = o_begin;
    for (; o + 4 <= o_end; o += 4) {
      DotRows<4>(x_row, w + o * in, in, dots);
      for (size_t k = 0; k < 4; ++k) y_row[o + k] = bias != nullptr ? bias[o + k] + dots[k] : dots[k];
    }
    for (; o < o_end; ++o) {
      DotRows<1>(x_row, w + o * in, in, dots);
      y_row[o] = bias != nullptr ? bias[o] + dots[0] : dots[0];
    }
  }
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_LINEAR_LINEAR_MVE_H_

// SPDX-License-Identifier: Apache-2.0
// Linear projections y = x W + b (W stored [in][out]) and y = x W^T + b (W stored [out][in], PyTorch's layout),
// to build Q, K and V from embeddings and the MLP of a transformer block.
#ifndef EDGEATTN_LINEAR_H_
#define EDGEATTN_LINEAR_H_

#include <stddef.h>

#include "edgeattn/status.h"

namespace edgeattn {

// y[r][o] = bias[o] + sum_i x[r][i] * weight[i][o]: x [rows][in_features], weight [in_features][out_features]
// (the layout of numpy's x @ W), bias null or [out_features], y [rows][out_features].
// Both paths start from the bias and add the products in increasing i, so the bound is
//   |error| <= gamma(in_features + 1) * (sum_i |x[r][i] * weight[i][o]| + |bias[o]|) + (in_features + 1) * 2^-149,
// gamma(n) = n*u/(1 - n*u), while nothing overflows; the second term is gradual underflow, (in_features + 1) * 2^-126
// on SIMD units that flush subnormals to zero (see dot.h). u = 2^-24 rounding to nearest, 2^-23 under a directed mode.
// Errors: kNullPointer (x, weight or y null), kInvalidShape (a zero size or a byte count overflows),
// kOverlap (y overlaps x, weight or bias).
// Stack: the SIMD path copies strips of weight (up to 8 KiB) into a stack buffer on SIMD targets, so that each
// strip is read from L1 by every block of four rows; the SCALAR and EMU128 targets of microcontroller builds
// read weight in place (docs/footprint.md: stack table).
[[nodiscard]] Status Linear(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
                            size_t out_features, float* y) noexcept;

// y[r][o] = bias[o] + sum_i x[r][i] * weight[o][i]: y = x W^T + b with weight stored [out_features][in_features],
// the layout of PyTorch's nn.Linear and llama2.c. Same arguments, errors and error bound as Linear (the bound holds
// for any summation order): each output is a dot product of a row of x with a row of weight, both contiguous,
// summed in Lanes-wide partial sums (four interleaved accumulators on the scalar path) with the bias added last.
// No stack buffer beyond a few dozen bytes.
[[nodiscard]] Status LinearTransposed(const float* x, size_t rows, size_t in_features, const float* weight,
                                      const float* bias, size_t out_features, float* y) noexcept;

// The work split for the application's threads: parts are blocks of output features (multiples of 16, at least
// 64 outputs each, at most 16 parts), counted from the shape only (0 for invalid arguments). Part p writes
// y[r][o] for its outputs and every row, in any order, on any thread; all parts together write exactly the bits
// of LinearTransposed. Errors: LinearTransposed's, in its order, then kInvalidArgument for part >= the count.
size_t LinearTransposedPartCount(size_t rows, size_t in_features, size_t out_features) noexcept;
[[nodiscard]] Status LinearTransposedPart(const float* x, size_t rows, size_t in_features, const float* weight,
                                          const float* bias, size_t out_features, size_t part, float* y) noexcept;

namespace internal {
// Outputs per part of a split of `out` outputs: a multiple of 16, at least min_outputs, so at most 16 parts.
constexpr size_t OutputPartSize(size_t out, size_t min_outputs) {
  const size_t sixteenth = (out / 16 + (out % 16 != 0 ? 1 : 0) + 15) / 16 * 16;
  return sixteenth < min_outputs ? min_outputs : sixteenth;
}
}  // namespace internal

namespace scalar {
[[nodiscard]] Status Linear(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
                            size_t out_features, float* y) noexcept;
[[nodiscard]] Status LinearTransposed(const float* x, size_t rows, size_t in_features, const float* weight,
                                      const float* bias, size_t out_features, float* y) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_LINEAR_H_

// SPDX-License-Identifier: Apache-2.0
// Row normalisations of a transformer block: RMSNorm (llama) and LayerNorm (BERT, Whisper, GPT-2).
#ifndef EDGEATTN_NORM_H_
#define EDGEATTN_NORM_H_

#include <stddef.h>

#include "edgeattn/status.h"

namespace edgeattn {

// y[r][j] = x[r][j] / sqrt(mean_j(x[r][j]^2) + eps) * weight[j]: x and y [rows][cols], weight null (= 1) or
// [cols]; eps >= 0 and finite. y == x (exact aliasing) is allowed.
//
// The sum of squares never overflows or underflows for a finite row: it is first summed as is; a finite sum of at
// least cols * 2^-58 proves max |x| >= 2^-30 and is used (one pass, the common case). Otherwise the row's max |x|
// is found, and if the sum overflowed, or max |x| < 2^-30 (where squares of the largest elements could reach the
// subnormal range), it is summed again with every element multiplied by the power of two 2^k that brings max |x|
// into [1, 4) (k clamped to [-126, 127], so 2^k is a normal float; multiplying by it is exact except below
// FLT_MIN). The factor 1 / sqrt(mean * 4^k + eps * 4^k) is formed per row in double precision (a few operations
// per row; software-emulated on cores without a double FPU, but never per element), and y = ((x * 2^k) * factor)
// rounded to float, then times weight. Error bound per element, with y* the exact result on the same float
// inputs and w = weight[j] (1 if null):
//   |y - y*| <= (cols / 2 + 4) * u * |y*| + (cols + 2) * 2^-149 * |w| + 2^-150,   u = 2^-24.
// The first term is the relative error of the sum of squares (gamma(cols), halved by the square root) plus four
// roundings; the others are gradual underflow (2^-150: the output's own rounding when it is subnormal). On SIMD units
// that flush subnormals to zero (ARMv7 NEON always; x86 if the caller sets FTZ/DAZ) inputs below FLT_MIN count as zero
// and the second term is (cols + 2) * 2^-126 * |w| (see dot.h). Special rows: an all-zero row (or, where subnormals
// flush, a row of subnormals) with eps = 0 gives zeros; a row holding an inf or a NaN gives NaN in every output.
// Errors: kNullPointer (x or y null), kInvalidShape (rows or cols 0, or a byte count overflows),
// kInvalidArgument (eps negative, inf or NaN), kOverlap (y overlaps x other than exactly, or overlaps weight).
[[nodiscard]] Status RmsNorm(const float* x, size_t rows, size_t cols, const float* weight, float eps,
                             float* y) noexcept;

// y[r][j] = (x[r][j] - mean) / sqrt(var + eps) * weight[j] + bias[j], mean and var of row r, var the biased
// (population) variance as in PyTorch's LayerNorm; weight null (= 1) or [cols], bias null (= 0) or [cols];
// eps >= 0 and finite. y == x is allowed.
//
// The mean is carried as a float-float pair (hi, lo): the row is summed in double lanes on SIMD targets with double
// vectors (each float exact, each addition rounded at 2^-53), elsewhere with Knuth's 2Sum per element (per lane on
// SIMD targets, an error term beside each partial sum); the partial sums (and errors) are added and divided by cols
// in double precision once per row, and x - mean = (x - hi) - lo. A row with mean 1e4 and spread 1 thus
// keeps full relative accuracy in its centred output (a float mean alone is off by up to 2^-11 there). If the
// float sum overflows, the row is summed again scaled by 2^-64 (exact). The variance is the mean of the squared
// centred values, with RmsNorm's rescaling by a power of two when needed (so it neither overflows nor underflows);
// the factor 1 / sqrt(var + eps) is formed in double precision once per row. Error bound per element, with mu,
// var* and y* exact on the same float inputs, rho = 1 / sqrt(var* + eps), w = weight[j] (1 if null), valid for
// |x| <= 2^126:
//   |y - y*| <= |w| * rho * ((cols / 2 + 7) * u * |x[j] - mu| + (cols + 8) * 2^-46 * max_i |x[i]|)
//               + u * |y*| + (cols + 2) * 2^-149 * |w| * (1 + rho) + 2^-150.
// The 2^-46 term is the float-float mean's own error; the last term is gradual underflow (on SIMD units that
// flush subnormals: 2^-126 instead of 2^-149, and inputs below FLT_MIN count as zero).
// Special rows: a row whose var + eps is 0 (a constant row with eps = 0) gives bias (zeros if bias is null); a row
// holding an inf or a NaN gives NaN in every output.
// Errors: kNullPointer (x or y null), kInvalidShape (rows or cols 0, or a byte count overflows),
// kInvalidArgument (eps negative, inf or NaN), kOverlap (y overlaps x other than exactly, or overlaps weight or
// bias).
[[nodiscard]] Status LayerNorm(const float* x, size_t rows, size_t cols, const float* weight, const float* bias,
                               float eps, float* y) noexcept;

namespace scalar {
// Plain C++ with the same contracts (norm_scalar.h): the same steps, one element at a time.
[[nodiscard]] Status RmsNorm(const float* x, size_t rows, size_t cols, const float* weight, float eps,
                             float* y) noexcept;
[[nodiscard]] Status LayerNorm(const float* x, size_t rows, size_t cols, const float* weight, const float* bias,
                               float eps, float* y) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_NORM_H_

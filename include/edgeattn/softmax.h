// SPDX-License-Identifier: Apache-2.0
// Row-wise softmax.
#ifndef EDGEATTN_SOFTMAX_H_
#define EDGEATTN_SOFTMAX_H_

#include <stddef.h>

#include "edgeattn/status.h"

namespace edgeattn {

// out[r][j] = e^(in[r][j] - m_r) / sum_k e^(in[r][k] - m_r), m_r = max_k in[r][k], for a [rows][cols] matrix.
// in == out is allowed; partial overlap is kOverlap.
//
// Special values, row by row (other rows are never affected):
//   - -inf entries give exactly 0; a row of only -inf gives all zeros, never NaN;
//   - a NaN anywhere in the row makes the whole row NaN;
//   - +inf entries share the row equally (1/count each, the limit of the softmax), everything else is 0;
//   - huge finite logits are fine: the max is subtracted, so scores of ~1e4 (seed 002) give the exact
//     one-hot answer and +-FLT_MAX do not overflow.
//
// Error bound, per element, against the softmax of the float inputs computed exactly:
//   |out - exact| <= 4 ULP(exact) where exact >= FLT_MIN, and <= FLT_MIN (absolute) where exact < FLT_MIN.
// Hence |sum_j out[r][j] - 1| <= 2^-21 for every row that is not NaN or all zeros. Measured maxima over 2^20
// random rows of 1..300 entries per path (normal, uniform +-1e4, Cauchy, offset 1e4, +-1e30 and +-FLT_MAX,
// tiny, 30% -inf): 2.7 ULP on targets with FMA (AVX3, AVX2, NEON and SVE on AArch64), 3.4 ULP without (SSE4,
// SSSE3, SCALAR, EMU128, ARMv7 NEON, the scalar path); row sums within 1e-7 of 1.
// Where the error comes from: the shifted exp's <= 1.19 ULP (1.44 without FMA; measured on x86 over every
// float argument of its range) is a relative error, and dividing by the row sum can move the result to the
// top of its binade, where the same relative error is twice as many ULPs; the division adds 0.5. What is not lost: x -
// m is computed with its rounding error (2Sum, or Fast2Sum on rows whose max bounds every entry's exponent: the same
// error) folded into the exp argument, so logits of 1e4 lose nothing; the row sum is accumulated in double per
// lane (rows of one vector, and rows of up to eight with AVX-512 and AArch64 NEON, four on the other x86 targets,
// add every term to the double lanes; longer rows keep a float per lane that starts at 2^65 above every term, so
// that Fast2Sum gives each addition's error exactly, beside the float sum of those errors, both moved to the double
// lanes every 32 steps: at most 2^-28 of the sum; softmax-inl.h, SoftmaxRegisterRow and ExpRowPairs); in float with
// 2Sum on SCALAR, EMU128 and ARMv7 NEON, which have no double vectors; the quotient is corrected by one Newton step
// (exact with FMA), or on x86 for rows of one vector (16 floats with AVX-512) is a vector division (correctly
// rounded).
// Highway's one-lane SCALAR target (the Cortex-M4 and M7 builds) runs the scalar path's row loop, the same bits.
// Environment: the bound above assumes rounding to nearest; with flush-to-zero / denormals-are-zero it holds
// unchanged (entries below FLT_MIN may be +0). Under a directed rounding mode the bound is 8 ULP (row sums
// within 2^-20; measured 4.4 ULP); the special values and the one-hot answers are exact in every mode, zeros
// are +0.
// Errors: kNullPointer, kInvalidShape (rows or cols 0, or rows*cols*4 overflows), kOverlap.
[[nodiscard]] Status Softmax(const float* in, float* out, size_t rows, size_t cols) noexcept;

namespace scalar {
// Plain C++ loops over the same algorithm; same contract.
[[nodiscard]] Status Softmax(const float* in, float* out, size_t rows, size_t cols) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_SOFTMAX_H_

// SPDX-License-Identifier: Apache-2.0
// Dot product of two float arrays.
#ifndef EDGEATTN_DOT_H_
#define EDGEATTN_DOT_H_

#include <stddef.h>

#include "edgeattn/status.h"

namespace edgeattn {

// *result = sum_{i<n} a[i] * b[i]. Any n (0 gives 0, and then a and b may be null) and any alignment.
// Error bound: |*result - exact| <= gamma(n) * sum |a[i] * b[i]| + n * 2^-149, gamma(n) = n*u / (1 - n*u),
// u = 2^-24, valid while n*u < 1 and nothing overflows. The second term is gradual underflow: a rounding in the
// subnormal range is off by up to 2^-150 in absolute terms, whatever the relative error. On SIMD units that flush
// subnormals to zero (ARMv7 NEON always; x86 if the caller sets FTZ/DAZ) that term is n * 2^-126 instead, and it
// holds only for inputs that are normal or zero (a subnormal input reads as 0 there). This is the classic bound for
// any summation order; the SIMD path sums in Lanes*4 interleaved partial sums, so its typical error is far smaller
// than the scalar path's (Highway's one-lane SCALAR target, in the Cortex-M4 and M7 builds, runs the scalar path's
// loop: fewer instructions there). It assumes rounding to nearest; under a directed rounding mode it holds with
// u = 2^-23.
// Errors: kNullPointer (a, b or result null), kInvalidShape (n * 4 bytes overflows size_t; checked before
// anything is read), kOverlap (result inside a or b).
[[nodiscard]] Status Dot(const float* a, const float* b, size_t n, float* result) noexcept;

namespace scalar {
// Plain C++ reference with the same contract: four interleaved accumulators (dot_scalar.h).
[[nodiscard]] Status Dot(const float* a, const float* b, size_t n, float* result) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_DOT_H_

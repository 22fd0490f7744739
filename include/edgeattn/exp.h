// SPDX-License-Identifier: Apache-2.0
// Elementwise exponential with edgeattn's own range reduction and polynomial (no libm).
#ifndef EDGEATTN_EXP_H_
#define EDGEATTN_EXP_H_

#include <stddef.h>

#include "edgeattn/status.h"

namespace edgeattn {

// out[i] = e^in[i] for i < n. in == out is allowed; partial overlap is kOverlap. n = 0 is valid, and then
// in and out may be null.
//
// Algorithm: x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite, two constants, n rounded to nearest by adding
// 1.5*2^23; when the caller's rounding mode is directed, with AVX-512's embedded rounding or stepped to the
// nearest integer), e^r = 1 + r*P(r) with P a degree-5 minimax polynomial (relative approximation error 2.1e-9),
// result = (s1 + (s1*r)*P(r)) * s2 with s1*s2 = 2^n, so n = 128 and gradual underflow need no special case.
// The SIMD path computes pairs of vectors whose lanes all lie in [-87, 43] with one factor 2^(n+64) and a final
// exact scaling by 2^-64 instead (no clamp, no NaN check): the same float, about half the operations.
//
// Contract (asserted over all tails, misalignments and targets; the exhaustive check over all 2^32 inputs
// measured 1.06 ULP with FMA and 1.36 ULP on targets without FMA):
//   - |error| <= 2 ULP of the correctly rounded result wherever that result is a normal float
//     (x in [-87.336, 88.722]);
//   - results below FLT_MIN may flush to +0 (they are either +0 or the subnormal product, never negative);
//   - exp(-inf) = +0 exactly, exp(x) = +inf for x > 88.7228 and for +inf;
//   - NaN in gives NaN out (Highway 1.0.3's Exp returns 0 for NaN; this does not).
// Environment: the contract holds in every rounding mode (to nearest, upward, downward, toward zero) and with
// flush-to-zero / denormals-are-zero on (results below FLT_MIN are then +0): the special values are exact, the
// 2 ULP bound unchanged (tests/fp_env_test.cc, dense samples per mode: max 1.86 ULP under directed rounding
// on x86-64). The FP control register is read-only to the library.
// Errors: kNullPointer, kInvalidShape (n * 4 bytes overflows size_t; checked before anything is read or
// written), kOverlap.
[[nodiscard]] Status Exp(const float* in, float* out, size_t n) noexcept;

namespace scalar {
// Plain C++ loop over the same algorithm; same contract. In round to nearest it returns 1 for |x| < 2^-26 without
// the polynomial: the value the algorithm rounds to there, bit for bit, without subnormal products for tiny x.
// Highway's one-lane SCALAR target (the Cortex-M4 and M7 builds) runs this loop: fewer instructions there.
[[nodiscard]] Status Exp(const float* in, float* out, size_t n) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_EXP_H_

// SPDX-License-Identifier: Apache-2.0
// Sinusoidal positional encoding (Vaswani et al., 2017).
#ifndef EDGEATTN_POSITIONAL_ENCODING_H_
#define EDGEATTN_POSITIONAL_ENCODING_H_

#include <stddef.h>

#include "edgeattn/status.h"

namespace edgeattn {

// Largest position + 1 the encoding accepts: first_position + seq_len <= kMaxPositions.
constexpr size_t kMaxPositions = size_t{1} << 24;

// Adds PE in place to x [seq_len][d_model]; row r is at position p = first_position + r:
//   PE(p, 2i) = sin(p / 10000^(2i/d_model)),  PE(p, 2i+1) = cos(p / 10000^(2i/d_model)),
// with i the pair index (seed 002's notebook uses the column index there; that is a defect we do not copy).
// Odd d_model works: the last column is a sine.
//
// The angle is formed and reduced modulo pi/2 in double precision (own polynomials, no libm), and x + PE is
// rounded once to float. Error bound per element, for p < kMaxPositions:
//   |out - (x + PE)| <= 1 ULP(out) + (p + 1) * 2^-46.
// The second term is the double-precision representation of 10000^(-2i/d) magnified by p. The bound holds in
// every rounding mode (the reductions modulo ln2 and pi/2 round to nearest whatever the mode) and with
// flush-to-zero / denormals-are-zero on; to nearest the first term is 0.5 ULP.
// Errors: kNullPointer, kInvalidShape (seq_len or d_model 0, or a byte count overflows),
// kInvalidArgument (first_position + seq_len > kMaxPositions).
// On targets without double-precision vectors (ARMv7 NEON) the SIMD entry point runs the scalar loop.
[[nodiscard]] Status AddPositionalEncoding(float* x, size_t seq_len, size_t d_model, size_t first_position) noexcept;

namespace scalar {
[[nodiscard]] Status AddPositionalEncoding(float* x, size_t seq_len, size_t d_model, size_t first_position) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_POSITIONAL_ENCODING_H_

// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding: the frequencies (own double-precision log, the positional encoding's exp), the
// rotation of one pair, and the scalar loop. The sin/cos come from positional_encoding_scalar.h, whose range
// reduction keeps an angle below 2^24 * pi/2 exact to double precision.
#ifndef EDGEATTN_LIB_ROPE_ROPE_SCALAR_H_
#define EDGEATTN_LIB_ROPE_ROPE_SCALAR_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/bit_cast.h"
#include "lib/common/fp_env.h"
#include "lib/positional_encoding/positional_encoding_scalar.h"

namespace edgeattn {
namespace internal {

// The validated descriptor: rotary_dim even and >= 2 (or 0: nothing to rotate), layout 0 or 1.
struct RopeProblem {
  size_t num_heads;
  size_t head_dim;
  size_t rotary_dim;
  double log_base;
  bool half;  // kHalf layout
};

// ln(v) for a finite normal v > 0 in double precision: v = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
// ln(m) = 2 atanh(z), z = (m - 1)/(m + 1), |z| <= 0.1716, whose odd series to z^23 is below 2^-60 in error.
inline double LogDouble(double v) {
  const uint64_t bits = BitCastScalar<uint64_t>(v);
  int64_t e = static_cast<int64_t>((bits >> 52) & 0x7ff) - 1023;
  double m = BitCastScalar<double>((bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));  // [1, 2)
  if (m > 1.4142135623730951) m *= 0.5, e += 1;
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  double series = 0.0;
  for (int k = 23; k >= 3; k -= 2) series = series * z2 + 1.0 / k;
  const double ln_m = 2.0 * (z + z * z2 * series);
  const double n = static_cast<double>(e);
  return (n * PeConstants::kLn2Hi + ln_m) + n * PeConstants::kLn2Lo;
}

// base^(-2 pair / rotary_dim) = e^t, t = -(2 pair / rotary_dim) ln(base) in [-89, 0] for any float base.
// to_nearest: DoublesRoundToNearest() (lib/common/fp_env.h), read once per call.
inline double RopeFrequency(size_t pair, size_t rotary_dim, double log_base, bool to_nearest) {
  if (pair == 0) return 1.0;
  return ExpDoubleSmall(-(static_cast<double>(2 * pair) * log_base) / static_cast<double>(rotary_dim), to_nearest);
}

// Rotates the pair (a, b) by the angle whose sine and cosine are s and c; one rounding to float each.
inline void RotatePair(float* a, float* b, double s, double c) {
  const double xa = static_cast<double>(*a), xb = static_cast<double>(*b);
  *a = static_cast<float>(xa * c - xb * s);
  *b = static_cast<float>(xb * c + xa * s);
}

// Pair i of a head: element offsets of its two members.
inline size_t RopeFirst(const RopeProblem& p, size_t i) { return p.half ? i : 2 * i; }
inline size_t RopeSecond(const RopeProblem& p, size_t i) { return p.half ? i + p.rotary_dim / 2 : 2 * i + 1; }

// Rotates pair i of every head of one token by the angle with sine s and cosine c.
inline void RotatePairAllHeads(const RopeProblem& p, float* token, size_t i, double s, double c) {
  const size_t first = RopeFirst(p, i), second = RopeSecond(p, i);
  for (size_t h = 0; h < p.num_heads; ++h) {
    float* head = token + h * p.head_dim;
    RotatePair(head + first, head + second, s, c);
  }
}

// Pair outer, token inner: the frequency is evaluated once per pair, sin/cos once per (token, pair) and shared
// by every head.
// kToNearest: the range reductions' magic-constant rounding is to nearest (else they step to it, as the
// positional encoding does under a directed rounding mode).
template <bool kToNearest>
inline void RopeScalarIn(const RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  const size_t pairs = p.rotary_dim / 2;
  const size_t token_stride = p.num_heads * p.head_dim;
  for (size_t i = 0; i < pairs; ++i) {
    const double w = RopeFrequency(i, p.rotary_dim, p.log_base, kToNearest);
    for (size_t t = 0; t < seq_len; ++t) {
      double s, c;
      SinCos<kToNearest>(static_cast<double>(first_position + t) * w, &s, &c);
      RotatePairAllHeads(p, x + t * token_stride, i, s, c);
    }
  }
}

inline void RopeScalar(const RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  if (DoublesRoundToNearest()) return RopeScalarIn<true>(p, x, seq_len, first_position);
  RopeScalarIn<false>(p, x, seq_len, first_position);
}

// Calls rotate_head(head, row) for every head of every token, with the table row of the token's position (the
// table variant's loops, shared by the scalar path and the Helium kernel, rope_mve.h).
template <class RotateHead>
inline void ForEachHeadWithTableRow(const RopeProblem& p, const float* table, size_t table_first_position, float* x,
                                    size_t seq_len, size_t first_position, RotateHead rotate_head) {
  const size_t token_stride = p.num_heads * p.head_dim;
  for (size_t t = 0; t < seq_len; ++t) {
    const float* row = table + (first_position + t - table_first_position) * p.rotary_dim;
    float* token = x + t * token_stride;
    for (size_t h = 0; h < p.num_heads; ++h) rotate_head(token + h * p.head_dim, row);
  }
}

// The table variant: float arithmetic only (each product and sum rounded once), cos and sin from the table row
// of the token's position.
inline void RopeWithTableScalar(const RopeProblem& p, const float* table, size_t table_first_position, float* x,
                                size_t seq_len, size_t first_position) {
  ForEachHeadWithTableRow(p, table, table_first_position, x, seq_len, first_position,
                          [&p](float* head, const float* row) {
                            for (size_t i = 0; i < p.rotary_dim / 2; ++i) {
                              const float c = row[2 * i], s = row[2 * i + 1];
                              float* a = head + RopeFirst(p, i);
                              float* b = head + RopeSecond(p, i);
                              const float xa = *a, xb = *b;
                              *a = xa * c - xb * s;
                              *b = xb * c + xa * s;
                            }
                          });
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_ROPE_ROPE_SCALAR_H_

// SPDX-License-Identifier: Apache-2.0
// Softmax of one row, scalar: the reference algorithm, and the special-value rules every path shares.
#ifndef EDGEATTN_LIB_SOFTMAX_SOFTMAX_SCALAR_H_
#define EDGEATTN_LIB_SOFTMAX_SOFTMAX_SCALAR_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/bit_cast.h"
#include "lib/common/float_util.h"
#include "lib/exp/exp_scalar.h"

namespace edgeattn {
namespace internal {

// A row whose max m is not finite (+inf, -inf or NaN). Reads in before writing the same index of out, so
// in == out works. NaN anywhere: all NaN. Only -inf: all zeros. Some +inf: they share the row equally.
inline void SoftmaxRowNonFiniteMax(const float* in, float* out, size_t n, float m) {
  size_t num_pos_inf = 0;
  bool has_nan = m != m;
  for (size_t j = 0; j < n; ++j) {
    has_nan |= in[j] != in[j];
    num_pos_inf += in[j] == kInfinity ? 1 : 0;
  }
  if (has_nan) return FillRow(out, n, kQuietNaN);
  if (num_pos_inf == 0) return FillRow(out, n, 0.0f);  // m == -inf: every entry is masked
  const float share = 1.0f / static_cast<float>(num_pos_inf);
  for (size_t j = 0; j < n; ++j) out[j] = in[j] == kInfinity ? share : 0.0f;
}

// out = e / sum, with the quotient corrected by one Newton step: r = q*sum - e is exact when fused. Written as
// q - r/sum rather than q + (e - q*sum)/sum (the same value and, to nearest, the same bits): for e = +0 the
// residual is +0 - +0, which is -0 when rounding downward, and q - (-0) stays +0 where q + (-0) would not.
inline float CorrectedQuotient(float e, float sum, float inv_sum) {
  const float q = e * inv_sum;
  const float r = q * sum - e;
  return q - r * inv_sum;
}

// Softmax of one row of n >= 1 floats whose max m is finite; in == out allowed. kToNearest: see exp_scalar.h.
template <bool kToNearest>
inline void SoftmaxRowFiniteMax(const float* in, float* out, size_t n, float m) {
  // e_j = exp(x_j - m) with the subtraction's rounding error folded into the exponent; sum compensated.
  float sum = 0.0f;
  float compensation = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    const float x = in[j];
    const float d = x - m;
    const float e = ExpRr2P6Shifted(d, TwoSumError(x, -m, d), kToNearest);
    out[j] = e;
    AddCompensated(e, sum, compensation);
  }
  const float total = sum + compensation;
  if (total != total) return FillRow(out, n, kQuietNaN);  // a NaN entry below a finite max

  const float inv_total = 1.0f / total;
  for (size_t j = 0; j < n; ++j) out[j] = CorrectedQuotient(out[j], total, inv_total);
}

// Whether every x of a row, x_min <= x <= m, all finite, may take the vector paths' short exp of x - m (softmax-inl.h,
// ExpMinusMaxFastRow), rounding to nearest: m > 0 and |x_min| below 2^(e + 1), e being m's exponent, so that no x has
// a larger exponent than m and Fast2Sum(-m, x) gives x - m's rounding error exactly; and x_min - m at or above
// kShiftedMinArg, so that no lane needs the exp's flush to +0. False for a NaN x_min.
inline bool RowTakesFastExp(float x_min, float m) {
  if (!(m > 0.0f) || !(x_min - m >= ExpConstants::kShiftedMinArg)) return false;
  return (BitCastScalar<uint32_t>(x_min) & 0x7FFFFFFFu) >> 23 <= BitCastScalar<uint32_t>(m) >> 23;
}

// Softmax of one row of n >= 1 floats; in == out allowed.
inline void SoftmaxRowScalar(const float* in, float* out, size_t n) {
  float m = in[0];
  for (size_t j = 1; j < n; ++j) m = in[j] > m ? in[j] : m;
  if (!IsFinite(m)) return SoftmaxRowNonFiniteMax(in, out, n, m);
  if (RoundsToNearest()) return SoftmaxRowFiniteMax<true>(in, out, n, m);
  SoftmaxRowFiniteMax<false>(in, out, n, m);
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_SOFTMAX_SOFTMAX_SCALAR_H_

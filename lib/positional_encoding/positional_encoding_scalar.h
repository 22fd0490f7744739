// SPDX-License-Identifier: Apache-2.0
// Sinusoidal positional encoding: double-precision helpers shared by both paths, and the scalar loop.
// No libm: firmware links the library without it, and the error bound does not depend on a libm's quality.
#ifndef EDGEATTN_LIB_POSITIONAL_ENCODING_POSITIONAL_ENCODING_SCALAR_H_
#define EDGEATTN_LIB_POSITIONAL_ENCODING_POSITIONAL_ENCODING_SCALAR_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/bit_cast.h"
#include "lib/common/fp_env.h"

namespace edgeattn {
namespace internal {

struct PeConstants {
  static constexpr double kLn10000 = 9.210340371976184;
  // Adding 1.5*2^52 rounds a double of magnitude < 2^51 to an integer held in the low mantissa bits.
  static constexpr double kRoundMagic = 6755399441055744.0;
  static constexpr double kInvLn2 = 1.4426950408889634;
  // ln2 = kLn2Hi + kLn2Lo, kLn2Hi with 32 significant bits (n * kLn2Hi exact for |n| < 2^21).
  static constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
  static constexpr double kLn2Lo = 1.9082149292705877e-10;
  static constexpr double kTwoOverPi = 0.6366197723675814;
  // pi/2 = kPiOver2A + kPiOver2B + kPiOver2C to 2^-110; A and B have 29 significant bits, so k * A and k * B
  // are exact for k < 2^24 even without FMA, and angle - k*A is exact by Sterbenz's lemma.
  static constexpr double kPiOver2A = 0x1.921fb54000000p+0;
  static constexpr double kPiOver2B = 0x1.10b4612000000p-30;
  static constexpr double kPiOver2C = -0x1.676733ae8fe48p-60;
  // Under a directed rounding mode the magic-constant rounding gives the floor or ceiling: the reduced argument
  // reaches ln2 (exp) or pi/2 (sin, cos), where the Taylor series fall short of their 1e-17. Past these
  // thresholds n or k is stepped by one; round-to-nearest never leaves more than ln2/2 + 15 ulp(t) and
  // pi/4 + k (kPiOver2B + kPiOver2C) + ulp(angle) < pi/4 + 0.01, so it never steps.
  static constexpr double kExpStepThreshold = 0.3467;
  static constexpr double kTrigStepThreshold = 0.81;
};

// Taylor coefficients, exact rationals rounded once. Enough terms for |error| < 1e-17 on the ranges used:
// e^r on |r| <= ln2/2 to r^13; sin, cos on |r| <= pi/4 to r^15, r^16. Highest degree first (Horner).
constexpr double InverseFactorial(int k) { return k <= 1 ? 1.0 : InverseFactorial(k - 1) / k; }
struct PeTaylor {
  static constexpr double kExp[14] = {
      InverseFactorial(13), InverseFactorial(12), InverseFactorial(11), InverseFactorial(10), InverseFactorial(9),
      InverseFactorial(8),  InverseFactorial(7),  InverseFactorial(6),  InverseFactorial(5),  InverseFactorial(4),
      InverseFactorial(3),  InverseFactorial(2),  InverseFactorial(1),  InverseFactorial(0)};
  // sin r = r + r^3 * (kSin evaluated in z = r^2); cos r = 1 + z * (kCos evaluated in z).
  static constexpr double kSin[7] = {-InverseFactorial(15), InverseFactorial(13), -InverseFactorial(11),
                                     InverseFactorial(9),   -InverseFactorial(7), InverseFactorial(5),
                                     -InverseFactorial(3)};
  static constexpr double kCos[8] = {InverseFactorial(16),  -InverseFactorial(14), InverseFactorial(12),
                                     -InverseFactorial(10), InverseFactorial(8),   -InverseFactorial(6),
                                     InverseFactorial(4),   -InverseFactorial(2)};
};

// magic_sum = magic + n, n from x / unit in the caller's rounding mode: n stepped by one where
// |x - n * unit_hi| exceeds the threshold (adding 1 to magic_sum is exact: its ulp is 1).
inline double StepToNearestDouble(double x, double magic_sum, double unit_hi, double threshold) {
  const double r_hi = x - (magic_sum - PeConstants::kRoundMagic) * unit_hi;
  if (r_hi > threshold) return magic_sum + 1.0;
  if (r_hi < -threshold) return magic_sum - 1.0;
  return magic_sum;
}

// e^t for t in [-10, 0]: the only use is 10000^(-2i/d). to_nearest: RoundsToNearest().
inline double ExpDoubleSmall(double t, bool to_nearest) {
  using C = PeConstants;
  double magic_sum = t * C::kInvLn2 + C::kRoundMagic;
  if (!to_nearest) magic_sum = StepToNearestDouble(t, magic_sum, C::kLn2Hi, C::kExpStepThreshold);
  const double n = magic_sum - C::kRoundMagic;
  const double r = (t - n * C::kLn2Hi) - n * C::kLn2Lo;
  double p = 0.0;
  for (double c : PeTaylor::kExp) p = p * r + c;
  const int64_t e = static_cast<int64_t>(n) + 1023;
  return p * BitCastScalar<double>(static_cast<uint64_t>(e) << 52);
}

// 10000^(-2*pair/d_model), the angular frequency of column pair `pair`.
inline double InverseFrequency(size_t pair, size_t d_model, bool to_nearest) {
  return ExpDoubleSmall(-(static_cast<double>(2 * pair) * PeConstants::kLn10000) / static_cast<double>(d_model),
                        to_nearest);
}

// sin(r) and cos(r) for |r| <= pi/4 (plus rounding).
inline double SinReduced(double r) {
  const double z = r * r;
  double p = 0.0;
  for (double c : PeTaylor::kSin) p = p * z + c;
  return r + r * z * p;
}
inline double CosReduced(double r) {
  const double z = r * r;
  double p = 0.0;
  for (double c : PeTaylor::kCos) p = p * z + c;
  return 1.0 + z * p;
}

// sin and cos of an angle in [0, 2^24 * pi/2): angle = k*pi/2 + r, quadrant k mod 4.
template <bool kToNearest>
inline void SinCos(double angle, double* sin_out, double* cos_out) {
  using C = PeConstants;
  double magic_sum = angle * C::kTwoOverPi + C::kRoundMagic;
  if (!kToNearest) magic_sum = StepToNearestDouble(angle, magic_sum, C::kPiOver2A, C::kTrigStepThreshold);
  const double k = magic_sum - C::kRoundMagic;
  const uint64_t quadrant = BitCastScalar<uint64_t>(magic_sum) & 3;
  const double r = ((angle - k * C::kPiOver2A) - k * C::kPiOver2B) - k * C::kPiOver2C;
  const double s = SinReduced(r);
  const double c = CosReduced(r);
  const double sin_abs = (quadrant & 1) != 0 ? c : s;
  const double cos_abs = (quadrant & 1) != 0 ? s : c;
  *sin_out = (quadrant & 2) != 0 ? -sin_abs : sin_abs;
  *cos_out = ((quadrant + 1) & 2) != 0 ? -cos_abs : cos_abs;
}

// x[r][2i] += sin(p*w_i), x[r][2i+1] += cos(p*w_i), p = first_position + r, rounded once to float.
template <bool kToNearest>
inline void AddPositionalEncodingScalarIn(float* x, size_t seq_len, size_t d_model, size_t first_position) {
  const size_t pairs = (d_model + 1) / 2;
  for (size_t i = 0; i < pairs; ++i) {
    const double w = InverseFrequency(i, d_model, kToNearest);
    for (size_t r = 0; r < seq_len; ++r) {
      double s, c;
      SinCos<kToNearest>(static_cast<double>(first_position + r) * w, &s, &c);
      float* row = x + r * d_model;
      row[2 * i] = static_cast<float>(static_cast<double>(row[2 * i]) + s);
      if (2 * i + 1 < d_model) row[2 * i + 1] = static_cast<float>(static_cast<double>(row[2 * i + 1]) + c);
    }
  }
}

inline void AddPositionalEncodingScalar(float* x, size_t seq_len, size_t d_model, size_t first_position) {
  if (DoublesRoundToNearest()) return AddPositionalEncodingScalarIn<true>(x, seq_len, d_model, first_position);
  AddPositionalEncodingScalarIn<false>(x, seq_len, d_model, first_position);
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_POSITIONAL_ENCODING_POSITIONAL_ENCODING_SCALAR_H_

// SPDX-License-Identifier: Apache-2.0
// edgeattn's exp: constants shared by every path, and the scalar implementation.
//
// Variant names follow the algorithm (rr2 = range reduction with a two-constant ln2, p6 = degree-6 polynomial):
//   ExpRr2P6         all floats: clamps, splits 2^n into two factors, propagates NaN;
//   ExpRr2P6Shifted  d <= 0 only (softmax after subtracting the row max): flushes results below FLT_MIN to +0
//                    (NaN stays NaN), takes a correction d_lo with |d_lo| <= ulp(d) so that e^(d + d_lo) is
//                    computed as accurately as if d + d_lo were a float; evaluates the polynomial by Estrin's
//                    scheme (a shorter dependency chain, which is what a softmax row waits on; max 1.19 ULP
//                    over every d with |d_lo| <= ulp(d)/2, against ExpRr2P6's 1.06).
// Neither variant forms a subnormal intermediate for a normal result, so both keep their accuracy where the
// hardware flushes subnormals to zero (ARMv7 NEON always does; x86 does under FTZ/DAZ).
//
// Rounding modes. The range reduction's n = round(x log2(e)) comes from adding 1.5*2^23, which rounds in the
// caller's mode: under a directed mode n is the floor or ceiling, |r| reaches ln2, outside the polynomial's
// interval (up to 270 ULP, measured on x86). Each variant therefore takes `to_nearest` (RoundsToNearest(), read
// once per row or call): when false, n is stepped by one wherever |x - n ln2| > ln2/2 (StepToNearest), which
// never happens in round-to-nearest, so the default environment takes the same operations and gives the same
// bits as before.
// Special values come from explicit comparisons, never from an overflowing or underflowing product (whose
// result depends on the mode: FLT_MAX instead of +inf toward zero, a subnormal instead of +0 upward).
// The SIMD versions in exp-inl.h are the same operations on vectors.
#ifndef EDGEATTN_LIB_EXP_EXP_SCALAR_H_
#define EDGEATTN_LIB_EXP_EXP_SCALAR_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/bit_cast.h"
#include "lib/common/float_util.h"
#include "lib/common/fp_env.h"

namespace edgeattn {
namespace internal {

struct ExpConstants {
  static constexpr float kLog2e = 1.44269502163f;
  // Adding 1.5*2^23 rounds a float in (-2^22, 2^22) to an integer held in the low mantissa bits.
  static constexpr float kRoundMagic = 12582912.0f;
  // ... and 1.5*2^23 + 127 + 64 leaves n + 64 + 127, the biased exponent of 2^(n+64), in the low bits: the
  // shifted variant works with 2^(n+64) (normal for every n >= -126) and scales by 2^-64 last.
  static constexpr float kRoundMagicBiased = 12583103.0f;
  // ... and 1.5*2^23 + 127 leaves the biased exponent of 2^n itself: for |x| <= kUnscaledMax, where 2^n is normal
  // (ExpRr2P6Unscaled in exp-inl.h).
  static constexpr float kRoundMagicUnscaled = 12583039.0f;
  static constexpr float kUnscaledMax = 43.0f;
  static constexpr float kTwoToMinus64 = 5.421010862427522e-20f;
  // ln2 = kLn2Hi + kLn2Lo; kLn2Hi (0x3F317200) has 15 significant bits, so n * kLn2Hi is exact for |n| < 512
  // even without FMA, and x - n*kLn2Hi is exact by Sterbenz's lemma.
  static constexpr float kLn2Hi = 0.693145751953125f;
  static constexpr float kLn2Lo = 1.428606765330187e-06f;
  // e^r ~= 1 + r*P(r), P(r) = c1 + c2 r + ... + c6 r^5 on |r| <= ln2/2: minimax fit of the relative error
  // (Lawson's algorithm, float64, 20001 points), max relative approximation error 2.1e-9 = 0.036 u.
  static constexpr float kC1 = 1.0f;
  static constexpr float kC2 = 0.4999999403953552f;
  static constexpr float kC3 = 0.1666642129421234f;
  static constexpr float kC4 = 0.041668057441711426f;
  static constexpr float kC5 = 0.008374965749680996f;
  static constexpr float kC6 = 0.0013842704938724637f;
  // General exp, rounding to nearest: clamps its input here (the result is already +0 / +inf, and n stays in
  // [-216, 144] so that both halves of n give normal scale factors).
  static constexpr float kClampLow = -150.0f;
  static constexpr float kClampHigh = 100.0f;
  // ... and gives 1 below this |x| (2^-26): there |r P(r)| < 2^-25, so 1 + r P(r) rounds to 1 to nearest, and the
  // polynomial's products, subnormal from |x| < 2^-117, would cost x86 cores a microcode assist each. The scalar
  // path and the one-lane SIMD target test for it; the vector targets do not (one more test per vector would
  // cost every call).
  static constexpr float kTinyArg = 1.4901161193847656e-08f;
  // Under a directed mode an overflowing or underflowing product gives FLT_MAX or a subnormal instead, so the
  // special values come from comparisons: +inf above kOverflowArg (the largest float whose e^x rounds to a
  // finite float to nearest), +0 below kUnderflowArg (e^x < 2^-150 there: +0 to nearest).
  static constexpr float kOverflowArg = 88.72283172607421875f;  // 0x42B17217
  static constexpr float kUnderflowArg = -104.0f;
  // Under a directed rounding mode, n = floor or ceil(x log2 e): step it when |x - n ln2hi| exceeds this, ln2/2
  // plus a margin above what round-to-nearest ever leaves (ln2/2 + |n| ln2lo + |x| 2^-24 < 0.3470).
  static constexpr float kStepThreshold = 0.3476f;
  // The SIMD array loop's fast path (exp-inl.h) for vectors whose lanes all lie in [kFastLow, kFastHigh]: there
  // n is in [-126, 62], the one factor 2^(n+64) is normal and never smaller than ExpRr2P6's 2^(n>>1) (so no
  // subnormal intermediate where ExpRr2P6 has none, which matters where subnormals flush to zero), and scaling
  // by 2^-64 last is exact because e^x >= FLT_MIN. The result is the float ExpRr2P6 gives.
  static constexpr float kFastLow = -87.0f;
  static constexpr float kFastHigh = 43.0f;
  // Largest float <= ln(FLT_MIN): from here up, 2^n >= 2^-126 is a normal float. Below, ExpRr2P6Shifted gives +0.
  static constexpr float kShiftedMinArg = -87.3365478515625f;
};

// t = 1.5*2^23 + bias + n, n from x in a directed mode: step n by one toward round(x log2 e). Adding 1 to t is
// exact (its ulp is 1), so t keeps holding n in its low bits.
inline float StepToNearest(float x, float t, float magic) {
  using C = ExpConstants;
  const float r_hi = x - (t - magic) * C::kLn2Hi;
  if (r_hi > C::kStepThreshold) return t + 1.0f;
  if (r_hi < -C::kStepThreshold) return t - 1.0f;
  return t;
}

// P(r) of ExpConstants, Horner's scheme.
inline float ExpPolynomial(float r) {
  using C = ExpConstants;
  float p = C::kC6;
  p = p * r + C::kC5;
  p = p * r + C::kC4;
  p = p * r + C::kC3;
  p = p * r + C::kC2;
  p = p * r + C::kC1;
  return p;
}

// P(r) by Estrin's scheme, for the shifted variant, which sits on the dependency chain of a softmax row: a
// chain of three operations instead of five, one multiply more. Measured over every float d in
// [kShiftedMinArg, 0] with |d_lo| <= ulp(d)/2 (AVX-512 build): max 1.19 ULP, against 1.08 by Horner's scheme;
// 1.44 against 1.38 without FMA (SSSE3).
inline float ExpPolynomialEstrin(float r) {
  using C = ExpConstants;
  const float r2 = r * r;
  const float a = C::kC2 * r + C::kC1;
  const float b = C::kC4 * r + C::kC3;
  const float c = C::kC6 * r + C::kC5;
  return (c * r2 + b) * r2 + a;
}

inline float ExpRr2P6(float x, bool to_nearest) {
  using C = ExpConstants;
  if (x != x) return x + x;  // quiets a signalling NaN
  if (to_nearest) {
    if (x < C::kTinyArg && x > -C::kTinyArg) return 1.0f;
    if (x < C::kClampLow) x = C::kClampLow;
    if (x > C::kClampHigh) x = C::kClampHigh;
  } else {
    if (x > C::kOverflowArg) return kInfinity;
    if (x < C::kUnderflowArg) return 0.0f;
  }
  float t = x * C::kLog2e + C::kRoundMagic;
  if (!to_nearest) t = StepToNearest(x, t, C::kRoundMagic);
  const float n_float = t - C::kRoundMagic;
  const int32_t n = static_cast<int32_t>(BitCastScalar<uint32_t>(t) - BitCastScalar<uint32_t>(C::kRoundMagic));
  float r = x - n_float * C::kLn2Hi;
  r = r - n_float * C::kLn2Lo;
  const float p = ExpPolynomial(r);
  // 2^n = 2^n1 * 2^n2 with n1 = floor(n/2) (arithmetic shift), both normal for n in [-216, 144].
  const int32_t n1 = n >> 1;
  const int32_t n2 = n - n1;
  const float s1 = BitCastScalar<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = BitCastScalar<float>(static_cast<uint32_t>(n2 + 127) << 23);
  // s1 + (s1*r)*P rounds once; s1*r is exact (a power-of-two scaling far from the subnormal range).
  return ((s1 * r) * p + s1) * s2;
}

inline float ExpRr2P6(float x) { return ExpRr2P6(x, RoundsToNearest()); }

// The scalar path's loop (also the one-lane SCALAR target's, exp-inl.h): the rounding mode read once.
inline void ExpArrayScalar(const float* in, float* out, size_t n) {
  if (RoundsToNearest()) {
    for (size_t i = 0; i < n; ++i) out[i] = ExpRr2P6(in[i], true);
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = ExpRr2P6(in[i], false);
  }
}

// e^(d + d_lo) for d <= 0 (or -inf); +0 for d < kShiftedMinArg; NaN for NaN (softmax detects NaN rows by it).
inline float ExpRr2P6Shifted(float d, float d_lo, bool to_nearest) {
  using C = ExpConstants;
  if (d < C::kShiftedMinArg) return 0.0f;
  float t = d * C::kLog2e + C::kRoundMagicBiased;
  if (!to_nearest) t = StepToNearest(d, t, C::kRoundMagicBiased);
  const float n_float = t - C::kRoundMagicBiased;
  // d - n ln2hi is exact; d_lo - n ln2lo (tiny) is added to it once, beside the reduction.
  const float r = (d - n_float * C::kLn2Hi) + (d_lo - n_float * C::kLn2Lo);
  const float p = ExpPolynomialEstrin(r);
  const float s = BitCastScalar<float>(BitCastScalar<uint32_t>(t) << 23);  // 2^(n+64)
  return ((s * r) * p + s) * C::kTwoToMinus64;
}

// For callers in loops they do not own (attention): the mode check is hoisted (RoundsToNearestInvariant), and
// the loop keeps one predicted branch.
inline float ExpRr2P6Shifted(float d, float d_lo) { return ExpRr2P6Shifted(d, d_lo, RoundsToNearestInvariant()); }

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_EXP_EXP_SCALAR_H_

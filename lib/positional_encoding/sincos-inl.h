// SPDX-License-Identifier: Apache-2.0
// sin and cos of double vectors: the vector form of internal::SinCos (positional_encoding_scalar.h), used by the
// positional encoding and RoPE. Targets without double vectors (ARMv7 NEON) define nothing here; their kernels
// run the scalar loops.

#if defined(EDGEATTN_LIB_POSITIONAL_ENCODING_SINCOS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_POSITIONAL_ENCODING_SINCOS_INL_H_
#undef EDGEATTN_LIB_POSITIONAL_ENCODING_SINCOS_INL_H_
#else
#define EDGEATTN_LIB_POSITIONAL_ENCODING_SINCOS_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/positional_encoding/positional_encoding_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

// The polynomial with the given coefficients (highest degree first) at z.
template <class D, size_t kCount, class V = hn::VFromD<D>>
HWY_INLINE V HornerVec(D d, V z, const double (&coefficients)[kCount]) {
  V p = hn::Zero(d);
  for (double c : coefficients) p = hn::MulAdd(p, z, hn::Set(d, c));
  return p;
}

// x * inv_unit + kRoundMagic: the nearest integer k to x / unit in its low mantissa bits. kToNearest false (a
// directed rounding mode): the magic-constant rounding gives the floor or ceiling, and k is stepped to the nearest
// integer as internal::StepToNearestDouble does (unit_hi: the unit's leading part; threshold: its step test).
template <bool kToNearest, class D, class V = hn::VFromD<D>>
HWY_INLINE V MagicSumVec(D d, V x, double inv_unit, double unit_hi, double threshold) {
  const auto magic = hn::Set(d, internal::PeConstants::kRoundMagic);
  auto magic_sum = hn::MulAdd(x, hn::Set(d, inv_unit), magic);
  if (!kToNearest) {
    const auto r_hi = hn::NegMulAdd(hn::Sub(magic_sum, magic), hn::Set(d, unit_hi), x);
    const auto limit = hn::Set(d, threshold);
    const auto one = hn::Set(d, 1.0);
    magic_sum = hn::IfThenElse(hn::Gt(r_hi, limit), hn::Add(magic_sum, one), magic_sum);
    magic_sum = hn::IfThenElse(hn::Lt(r_hi, hn::Neg(limit)), hn::Sub(magic_sum, one), magic_sum);
  }
  return magic_sum;
}

// sin and cos of angles in [0, 2^24 * pi/2): the steps of internal::SinCos<kToNearest>, lane by lane, with its
// range and accuracy. kToNearest: internal::DoublesRoundToNearest(), read once per call by the caller; when false
// the magic-constant rounding gives the floor or ceiling, and k is stepped to the nearest integer as
// internal::StepToNearestDouble does.
template <bool kToNearest, class D, class V = hn::VFromD<D>>
HWY_INLINE void SinCosVec(D d, V angle, V* sin_out, V* cos_out) {
  using C = internal::PeConstants;
  using T = internal::PeTaylor;
  const hn::RebindToUnsigned<D> du;
  const auto magic_sum = MagicSumVec<kToNearest>(d, angle, C::kTwoOverPi, C::kPiOver2A, C::kTrigStepThreshold);
  const auto k = hn::Sub(magic_sum, hn::Set(d, C::kRoundMagic));
  auto r = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2A), angle);
  r = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2B), r);
  r = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2C), r);
  const auto z = hn::Mul(r, r);
  const auto s = hn::MulAdd(hn::Mul(r, z), HornerVec(d, z, T::kSin), r);
  const auto c = hn::MulAdd(z, HornerVec(d, z, T::kCos), hn::Set(d, 1.0));
  // The low mantissa bits of magic_sum are those of k: its quadrant k mod 4.
  const auto quadrant = hn::BitCast(du, magic_sum);
  const auto one = hn::Set(du, 1), two = hn::Set(du, 2);
  const auto odd = hn::RebindMask(d, hn::Eq(hn::And(quadrant, one), one));
  const auto neg_sin = hn::RebindMask(d, hn::Eq(hn::And(quadrant, two), two));
  const auto neg_cos = hn::RebindMask(d, hn::Eq(hn::And(hn::Add(quadrant, one), two), two));
  const auto sin_abs = hn::IfThenElse(odd, c, s);
  const auto cos_abs = hn::IfThenElse(odd, s, c);
  *sin_out = hn::IfThenElse(neg_sin, hn::Neg(sin_abs), sin_abs);
  *cos_out = hn::IfThenElse(neg_cos, hn::Neg(cos_abs), cos_abs);
}

// e^t lane by lane for t in [-89, 0] (RoPE's frequencies; internal::ExpDoubleSmall's steps and coefficients, its
// products and sums fused where the scalar rounds each: no less accurate). kToNearest as for SinCosVec.
template <bool kToNearest, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpSmallVec(D d, V t) {
  using C = internal::PeConstants;
  const hn::RebindToSigned<D> di;
  const auto n =
      hn::Sub(MagicSumVec<kToNearest>(d, t, C::kInvLn2, C::kLn2Hi, C::kExpStepThreshold), hn::Set(d, C::kRoundMagic));
  auto r = hn::NegMulAdd(n, hn::Set(d, C::kLn2Hi), t);
  r = hn::NegMulAdd(n, hn::Set(d, C::kLn2Lo), r);
  // 2^n for the integer n in [-129, 0]: its biased exponent in the bits.
  const auto scale = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, int64_t{1023}))));
  return hn::Mul(HornerVec(d, r, internal::PeTaylor::kExp), scale);
}

#endif  // HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

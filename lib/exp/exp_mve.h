// SPDX-License-Identifier: Apache-2.0
// edgeattn's exp on Helium (MVE): the operations of exp-inl.h (constants and algorithm: exp_scalar.h) on 4-lane
// vectors, with VFMA where Highway's MulAdd fuses. Contract: exp.h. MVE rounds to nearest whatever the caller's
// mode (lib/common/mve.h), so n = round(x log2 e) is always the nearest integer and the directed-mode steps of
// the other paths (StepToNearest) are not needed; results below FLT_MIN are +0 (flushed), which exp.h allows.
#ifndef EDGEATTN_LIB_EXP_EXP_MVE_H_
#define EDGEATTN_LIB_EXP_EXP_MVE_H_

#include "lib/common/bit_cast.h"
#include "lib/common/mve.h"
#include "lib/exp/exp_scalar.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// The constants ride in core registers as the scalar operand of VFMA/VFMAS/VMUL/VADD/VSUB (Rm): the eight Q
// registers hold only the data, where splatted constants would be spilled and reloaded every vector (GCC 12 did).
// VFMAS computes q * q' + Rm, VFMA q + q' * Rm; every step is the same fused operation as exp-inl.h's.

// p = P(r) of ExpConstants, Horner's scheme.
inline float32x4_t ExpPolynomial(float32x4_t r) {
  using C = internal::ExpConstants;
  float32x4_t p = vfmasq_n_f32(vdupq_n_f32(C::kC6), r, C::kC5);
  p = vfmasq_n_f32(p, r, C::kC4);
  p = vfmasq_n_f32(p, r, C::kC3);
  p = vfmasq_n_f32(p, r, C::kC2);
  return vfmasq_n_f32(p, r, C::kC1);
}

// P(r) by Estrin's scheme (the shifted variant, on a softmax row's dependency chain).
inline float32x4_t ExpPolynomialEstrin(float32x4_t r) {
  using C = internal::ExpConstants;
  const float32x4_t r2 = vmulq_f32(r, r);
  const float32x4_t a = vfmasq_n_f32(vdupq_n_f32(C::kC2), r, C::kC1);
  const float32x4_t b = vfmasq_n_f32(vdupq_n_f32(C::kC4), r, C::kC3);
  const float32x4_t c = vfmasq_n_f32(vdupq_n_f32(C::kC6), r, C::kC5);
  return vfmaq_f32(a, vfmaq_f32(b, c, r2), r2);
}

// The fast core of ExpRr2P6Shifted and ExpRr2P6InRange (see ExpScaledBy64 in exp-inl.h): e^(x + lo) as
// 2^(n+64) (1 + r P(r)) 2^-64, 2^(n+64) straight from t's bits. kWithLo: lo is added beside the reduction and P is
// evaluated by Estrin's scheme (the shifted variant); otherwise lo is ignored. x - n ln2 is x + n (-ln2): the
// same fused result.
template <bool kWithLo>
inline float32x4_t ExpScaledBy64(float32x4_t x, float32x4_t lo) {
  using C = internal::ExpConstants;
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(C::kRoundMagicBiased), x, C::kLog2e);
  const float32x4_t n_float = vsubq_n_f32(t, C::kRoundMagicBiased);
  const float32x4_t r_hi = vfmaq_n_f32(x, n_float, -C::kLn2Hi);
  float32x4_t r, p;
  if (kWithLo) {
    r = vaddq_f32(r_hi, vfmaq_n_f32(lo, n_float, -C::kLn2Lo));
    p = ExpPolynomialEstrin(r);
  } else {
    r = vfmaq_n_f32(r_hi, n_float, -C::kLn2Lo);
    p = ExpPolynomial(r);
  }
  const float32x4_t s = AsFloat(vshlq_n_s32(AsInt(t), 23));  // 2^(n+64)
  return vmulq_n_f32(vfmaq_f32(s, vmulq_f32(s, r), p), C::kTwoToMinus64);
}

// e^(d + d_lo) for d <= 0 computed by MVE arithmetic (x - m): +0 below kShiftedMinArg (and for -inf, whose r is
// NaN), NaN for NaN. "Below" is an unsigned comparison of the bits: for d <= 0 (sign set) a larger magnitude is a
// larger integer, and a NaN from VADD is the default NaN, whose sign is clear, so it is never "below" (a float
// comparison could not be trusted with NaN lanes, mve.h).
inline float32x4_t ExpRr2P6Shifted(float32x4_t d, float32x4_t d_lo) {
  using C = internal::ExpConstants;
  const uint32x4_t min_bits = vdupq_n_u32(0xC2AEAC50u);  // kShiftedMinArg
  static_assert(C::kShiftedMinArg == -87.3365478515625f, "min_bits is the bit pattern of kShiftedMinArg");
  const mve_pred16_t tiny = vcmphiq_u32(vreinterpretq_u32_f32(d), min_bits);
  return vpselq_f32(vdupq_n_f32(0.0f), ExpScaledBy64<true>(d, d_lo), tiny);
}

// e^x for every float x (ExpRr2P6 in exp_scalar.h): clamp to [-150, 100], n split into two normal factors,
// NaN given back quieted (VMAXNM/VMINNM turned it into a number).
inline float32x4_t ExpRr2P6(float32x4_t x) {
  using C = internal::ExpConstants;
  const float32x4_t xc = vminnmq_f32(vmaxnmq_f32(x, vdupq_n_f32(C::kClampLow)), vdupq_n_f32(C::kClampHigh));
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(C::kRoundMagic), xc, C::kLog2e);
  const float32x4_t n_float = vsubq_n_f32(t, C::kRoundMagic);
  const int32x4_t n = vsubq_n_s32(AsInt(t), internal::BitCastScalar<int32_t>(C::kRoundMagic));
  float32x4_t r = vfmaq_n_f32(xc, n_float, -C::kLn2Hi);
  r = vfmaq_n_f32(r, n_float, -C::kLn2Lo);
  const float32x4_t p = ExpPolynomial(r);
  const int32x4_t n1 = vshrq_n_s32(n, 1);
  const int32x4_t n2 = vsubq_s32(n, n1);
  const float32x4_t s1 = AsFloat(vshlq_n_s32(vaddq_n_s32(n1, 127), 23));
  const float32x4_t s2 = AsFloat(vshlq_n_s32(vaddq_n_s32(n2, 127), 23));
  const float32x4_t f = vmulq_f32(vfmaq_f32(s1, vmulq_f32(s1, r), p), s2);
  return vpselq_f32(vaddq_f32(x, x), f, IsNan(x));
}

// Whether every lane lies in [kFastLow, kFastHigh], where ExpScaledBy64 gives ExpRr2P6's float. False for a NaN
// lane on both compilers: x >= lo is GE (ordered) as GCC and clang emit it, and the lane's answer is the AND.
inline bool ExpInFastRange(float32x4_t x0, float32x4_t x1) {
  using C = internal::ExpConstants;
  const mve_pred16_t in0 = vcmpgeq_n_f32(x0, C::kFastLow) & vcmpleq_n_f32(x0, C::kFastHigh);
  const mve_pred16_t in1 = vcmpgeq_n_f32(x1, C::kFastLow) & vcmpleq_n_f32(x1, C::kFastHigh);
  return (in0 & in1) == 0xFFFF;
}

// out[i] = e^in[i]; in == out allowed (each vector is loaded before it is stored).
inline void ExpArrayMve(const float* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const float32x4_t x0 = vldrwq_f32(in + i), x1 = vldrwq_f32(in + i + kLanes);
    if (ExpInFastRange(x0, x1)) {
      vstrwq_f32(out + i, ExpScaledBy64<false>(x0, x0));
      vstrwq_f32(out + i + kLanes, ExpScaledBy64<false>(x1, x1));
    } else {
      vstrwq_f32(out + i, ExpRr2P6(x0));
      vstrwq_f32(out + i + kLanes, ExpRr2P6(x1));
    }
  }
  for (; i + kLanes <= n; i += kLanes) vstrwq_f32(out + i, ExpRr2P6(vldrwq_f32(in + i)));
  if (i < n) StoreTail(out + i, ExpRr2P6(LoadTail(in + i, n - i)), n - i);
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_EXP_EXP_MVE_H_

// SPDX-License-Identifier: Apache-2.0
// Activations on Helium (MVE): the operations of activation-inl.h (algorithm and constants: activation_scalar.h),
// branch-free on 4-lane vectors with VFMA for Highway's MulAdd and TwoProductError. Contract: activation.h.
// MVE has no divide: the quotients (SiLU's and GELU tanh's x / (1 + e), the Mills ratio of GELU erf) come from
// mve::Divide, within 1 ULP of the correctly rounded quotient (ARMv7 NEON's refined estimate is the other path
// without a correctly rounded divide; activation.h's bounds hold for both). MVE flushes subnormals: results below
// FLT_MIN are +-0 as activation.h allows (ReLU passes a subnormal x > 0 through: it selects, it computes nothing).
#ifndef EDGEATTN_LIB_ACTIVATION_ACTIVATION_MVE_H_
#define EDGEATTN_LIB_ACTIVATION_ACTIVATION_MVE_H_

#include "edgeattn/activation.h"
#include "lib/activation/activation_scalar.h"
#include "lib/common/mve.h"
#include "lib/exp/exp_mve.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// factor * e^(w + w_lo) 2^64 for w in [-131, 0] (ExpScaledBy64 of activation_scalar.h); constants as scalar
// operands, as in exp_mve.h.
inline float32x4_t ExpScaledBy64(float32x4_t w, float32x4_t w_lo, float32x4_t factor) {
  using C = internal::ExpConstants;
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(C::kRoundMagicBiased), w, C::kLog2e);
  const float32x4_t n_float = vsubq_n_f32(t, C::kRoundMagicBiased);
  const float32x4_t r = vaddq_f32(vfmaq_n_f32(w, n_float, -C::kLn2Hi), vfmaq_n_f32(w_lo, n_float, -C::kLn2Lo));
  const float32x4_t p = ExpPolynomial(r);
  const float32x4_t s = vmulq_f32(factor, AsFloat(vshlq_n_s32(AsInt(t), 23)));  // factor * 2^(n+64)
  return vfmaq_f32(s, vmulq_f32(s, r), p);
}

// x * sigmoid given big_e = e^(-|z|) 2^64 and a = min(|x|, clamp): sign set: ((-a E) / den) 2^-64 (-0 for -0),
// else x / den, den = 1 + E 2^-64. x = +inf and NaN give x itself (the quotient's correction would turn inf - inf
// into NaN; a NaN with its sign set took the first branch), NaN quieted.
inline float32x4_t TimesSigmoid(float32x4_t x, float32x4_t a, float32x4_t big_e) {
  using C = internal::ActivationConstants;
  const float32x4_t one = vdupq_n_f32(1.0f), two_to_minus_64 = vdupq_n_f32(C::kTwoToMinus64);
  const mve_pred16_t negative = SignBitSet(x);
  const float32x4_t den = vfmaq_n_f32(one, big_e, C::kTwoToMinus64);
  const float32x4_t num = vpselq_f32(vmulq_f32(vnegq_f32(a), big_e), x, negative);
  const float32x4_t y = vmulq_f32(Divide(num, den), vpselq_f32(two_to_minus_64, one, negative));
  const mve_pred16_t keep_x = vcmpeqq_f32(x, vdupq_n_f32(internal::kInfinity)) | IsNan(x);
  return vpselq_f32(vaddq_f32(x, x), y, keep_x);
}

inline float32x4_t Silu(float32x4_t x) {
  using C = internal::ActivationConstants;
  // A NaN lane becomes the clamp here (VMINNM); x itself carries the NaN to y.
  const float32x4_t a = vminnmq_f32(vabsq_f32(x), vdupq_n_f32(C::kSiluClamp));
  return TimesSigmoid(x, a, ExpScaledBy64(vnegq_f32(a), vdupq_n_f32(0.0f), vdupq_n_f32(1.0f)));
}

inline float32x4_t GeluTanh(float32x4_t x) {
  using C = internal::ActivationConstants;
  const float32x4_t a = vminnmq_f32(vabsq_f32(x), vdupq_n_f32(C::kGeluTanhClamp));
  // z = kC1 a + kC3 a^3 as z + z_lo (GeluTanhArgument in activation_scalar.h); product errors by VFMA. 2Sum's
  // c1 - u is written -(u - c1): the same value, with c1 as a scalar operand.
  const float32x4_t a2 = vmulq_f32(a, a);
  const float32x4_t a2_lo = vfmaq_f32(vnegq_f32(a2), a, a);
  const float32x4_t c3a2 = vmulq_n_f32(a2, C::kTanhC3Hi);
  const float32x4_t c3a2_lo = vfmaq_n_f32(vnegq_f32(c3a2), a2, C::kTanhC3Hi);
  const float32x4_t t = vaddq_n_f32(c3a2, C::kTanhC1Hi);
  const float32x4_t t_minus_c1 = vsubq_n_f32(t, C::kTanhC1Hi);  // 2Sum: c1 + c3a2 = t + t_sum_error exactly
  const float32x4_t t_sum_error =
      vsubq_f32(vsubq_f32(c3a2, t_minus_c1), vsubq_n_f32(vsubq_f32(t, t_minus_c1), C::kTanhC1Hi));
  const float32x4_t corrections =
      vaddq_f32(vfmaq_n_f32(c3a2_lo, a2_lo, C::kTanhC3Hi), vfmaq_n_f32(vdupq_n_f32(C::kTanhC1Lo), a2, C::kTanhC3Lo));
  const float32x4_t t_lo = vaddq_f32(t_sum_error, corrections);
  const float32x4_t z = vmulq_f32(a, t);
  const float32x4_t z_lo = vfmaq_f32(vfmaq_f32(vnegq_f32(z), a, t), a, t_lo);
  return TimesSigmoid(x, a, ExpScaledBy64(vnegq_f32(z), vnegq_f32(z_lo), vdupq_n_f32(1.0f)));
}

// Q(y) = Phi(-y) e^(y^2/2) for y in [0, 15]: R / (kSqrt2Pi y R + P) (GeluErfMillsRatio in activation_scalar.h).
inline float32x4_t GeluErfMillsRatio(float32x4_t y) {
  using C = internal::ActivationConstants;
  float32x4_t p = vfmasq_n_f32(vdupq_n_f32(C::kP4), y, C::kP3);
  p = vfmasq_n_f32(p, y, C::kP2);
  p = vfmasq_n_f32(p, y, C::kP1);
  p = vfmasq_n_f32(p, y, C::kP0);
  float32x4_t r = vfmasq_n_f32(vdupq_n_f32(C::kR5), y, C::kR4);
  r = vfmasq_n_f32(r, y, C::kR3);
  r = vfmasq_n_f32(r, y, C::kR2);
  r = vfmasq_n_f32(r, y, C::kR1);
  r = vfmasq_n_f32(r, y, 1.0f);
  return Divide(r, vfmaq_f32(p, vmulq_n_f32(y, C::kSqrt2Pi), r));
}

inline float32x4_t GeluErf(float32x4_t x) {
  using C = internal::ActivationConstants;
  const float32x4_t a = vminnmq_f32(vabsq_f32(x), vdupq_n_f32(C::kGeluErfClamp));
  const float32x4_t a2 = vmulq_f32(a, a);
  const float32x4_t a2_lo = vfmaq_f32(vnegq_f32(a2), a, a);
  const float32x4_t big_phi = ExpScaledBy64(vmulq_n_f32(a2, -0.5f), vmulq_n_f32(a2_lo, -0.5f), GeluErfMillsRatio(a));
  const float32x4_t one = vdupq_n_f32(1.0f), two_to_minus_64 = vdupq_n_f32(C::kTwoToMinus64);
  const mve_pred16_t negative = SignBitSet(x);
  // Sign set: (-a Phi(-a) 2^64) 2^-64 (-0 for -0); otherwise x (1 - Phi(-x)); NaN given back quieted.
  const float32x4_t factor = vpselq_f32(big_phi, vfmaq_n_f32(one, big_phi, -C::kTwoToMinus64), negative);
  const float32x4_t xn = vpselq_f32(vnegq_f32(a), x, negative);
  const float32x4_t y = vmulq_f32(vmulq_f32(xn, factor), vpselq_f32(two_to_minus_64, one, negative));
  return vpselq_f32(vaddq_f32(x, x), y, IsNan(x));
}

// x where x > 0 (its bits, as a signed integer, are positive: a subnormal x > 0 is kept, which activation.h
// allows) or NaN; +0 for every other x (-0 and -inf included).
inline float32x4_t Relu(float32x4_t x) {
  const mve_pred16_t keep = vcmpgtq_s32(AsInt(x), vdupq_n_s32(0)) | IsNan(x);
  return vpselq_f32(x, vdupq_n_f32(0.0f), keep);
}

template <class Op>
inline void MapArray(const float* x, float* y, size_t n, Op op) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) vstrwq_f32(y + i, op(vldrwq_f32(x + i)));
  if (i < n) StoreTail(y + i, op(LoadTail(x + i, n - i)), n - i);
}

template <class Op>
inline void MapGatedArray(const float* gate, const float* up, float* y, size_t n, Op op) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) vstrwq_f32(y + i, vmulq_f32(op(vldrwq_f32(gate + i)), vldrwq_f32(up + i)));
  if (i < n) StoreTail(y + i, vmulq_f32(op(LoadTail(gate + i, n - i)), LoadTail(up + i, n - i)), n - i);
}

// Calls fn with the activation's kernel as a function object (act is valid: checked by the caller), so each
// array loop is instantiated with its activation inlined.
template <class Fn>
inline void WithActivation(Activation act, Fn fn) {
  switch (act) {
    case Activation::kGeluErf:
      return fn([](float32x4_t v) { return GeluErf(v); });
    case Activation::kGeluTanh:
      return fn([](float32x4_t v) { return GeluTanh(v); });
    case Activation::kSilu:
      return fn([](float32x4_t v) { return Silu(v); });
    case Activation::kRelu:
      return fn([](float32x4_t v) { return Relu(v); });
  }
}

inline void ActivationArrayMve(const float* x, float* y, size_t n, Activation act) {
  WithActivation(act, [&](auto op) { MapArray(x, y, n, op); });
}

inline void GatedActivationArrayMve(const float* gate, const float* up, float* y, size_t n, Activation act) {
  WithActivation(act, [&](auto op) { MapGatedArray(gate, up, y, n, op); });
}

inline void AddArraysMve(const float* a, const float* b, float* y, size_t n) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) vstrwq_f32(y + i, vaddq_f32(vldrwq_f32(a + i), vldrwq_f32(b + i)));
  if (i < n) StoreTail(y + i, vaddq_f32(LoadTail(a + i, n - i), LoadTail(b + i, n - i)), n - i);
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_ACTIVATION_ACTIVATION_MVE_H_

// SPDX-License-Identifier: Apache-2.0
// Activations on Highway vectors: the operations of activation_scalar.h, branch-free (both signs are computed and
// selected per lane), one vector at a time, masked tails.

#if defined(EDGEATTN_LIB_ACTIVATION_ACTIVATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ACTIVATION_ACTIVATION_INL_H_
#undef EDGEATTN_LIB_ACTIVATION_ACTIVATION_INL_H_
#else
#define EDGEATTN_LIB_ACTIVATION_ACTIVATION_INL_H_
#endif

#include <stddef.h>

#include "edgeattn/activation.h"
#include "hwy/highway.h"
#include "lib/activation/activation_scalar.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/exp/exp-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The rounding error of p = a*b (a*b = p + error exactly): one fused multiply-subtract where the target has FMA,
// Dekker's product otherwise (Highway's MulSub is then a separate multiply and subtract, which would return 0).
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V TwoProductError(D d, V a, V b, V p) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulSub(a, b, p);
#else
  const V splitter = hn::Set(d, internal::ActivationConstants::kSplitter);
  const V ta = hn::Mul(splitter, a);
  const V a_hi = hn::Sub(ta, hn::Sub(ta, a));
  const V a_lo = hn::Sub(a, a_hi);
  const V tb = hn::Mul(splitter, b);
  const V b_hi = hn::Sub(tb, hn::Sub(tb, b));
  const V b_lo = hn::Sub(b, b_hi);
  const V e = hn::Add(hn::Add(hn::Sub(hn::Mul(a_hi, b_hi), p), hn::Mul(a_hi, b_lo)), hn::Mul(a_lo, b_hi));
  return hn::Add(e, hn::Mul(a_lo, b_lo));
#endif
}

// See ExpScaledBy64 in activation_scalar.h: factor * e^(w + w_lo) 2^64 for w in [-131, 0].
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpScaledBy64(D d, V w, V w_lo, V factor) {
  using C = internal::ExpConstants;
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, C::kRoundMagicBiased);
  const V t = hn::MulAdd(w, hn::Set(d, C::kLog2e), magic);
  const V n_float = hn::Sub(t, magic);
  const V r =
      hn::Add(hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Hi), w), hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Lo), w_lo));
  const V p = ExpPolynomial(d, r);
  const V s = hn::Mul(factor, hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t))));  // factor * 2^(n+64)
  return hn::MulAdd(hn::Mul(s, r), p, s);
}

// See TimesSigmoid in activation_scalar.h; both signs computed, selected per lane.
// The one-lane target (HWY_SCALAR) also takes two shortcuts of activation_scalar.h: GELU tanh of x <= -11 is -0,
// and SiLU below 2^-26 takes the factor at 0. Both give the full computation's bits in round to nearest and skip
// products that are subnormal or underflow, a microcode assist each on x86 (tens to hundreds of ns a value; half
// of these paths' time in the exhaustive sweep). The vector targets do not test for them: such inputs are rare in
// a model, and one more test per vector would cost every call.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V TimesSigmoid(D d, V x, V a, V big_e) {
  using C = internal::ActivationConstants;
  const V one = hn::Set(d, 1.0f);
  const V two_to_minus_64 = hn::Set(d, C::kTwoToMinus64);
  const auto negative = hn::Lt(x, hn::Zero(d));
  const V den = hn::MulAdd(big_e, two_to_minus_64, one);
  const V num = hn::IfThenElse(negative, hn::Mul(hn::Neg(a), big_e), x);
  return hn::Mul(hn::Div(num, den), hn::IfThenElse(negative, two_to_minus_64, one));
}

template <class D, class V = hn::VFromD<D>>
HWY_INLINE V Silu(D d, V x) {
  using C = internal::ActivationConstants;
  // A NaN lane may become the clamp here (x86's min returns its second operand); x itself carries it to y.
  const V a = hn::Min(hn::Abs(x), hn::Set(d, C::kSiluClamp));
  return TimesSigmoid(d, x, a, ExpScaledBy64(d, hn::Neg(a), hn::Zero(d), hn::Set(d, 1.0f)));
}

// Whether the fast SiLU below may take this vector: where division is correctly rounded (ARMv7 NEON divides by a
// refined reciprocal estimate, whose extra error the bound has no room for).
#undef EDGEATTN_SILU_DIRECT
#if HWY_ARCH_ARM_V7
#define EDGEATTN_SILU_DIRECT 0
#else
#define EDGEATTN_SILU_DIRECT 1
#endif

// x / (1 + e^-x) for vectors whose lanes all have |x| <= kUnscaledMax (43), the common case (a transformer's MLP
// inputs rarely leave +-10): e^-x is then normal and 2^n needs no 2^64 scaling (exp-inl.h, ExpRr2P6Unscaled: the
// general exp's bits), so no tiny factor has to be kept scaled and no lane has to choose its sign's formula. 10
// operations on the FMA pipes and a division, against 14 and a division; the error is the exp's (<= 1.06 ULP)
// and the sum's and the quotient's roundings (activation.h gives the maximum measured over every float).
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V SiluDirect(D d, V x) {
  return hn::Div(x, hn::Add(hn::Set(d, 1.0f), ExpRr2P6Unscaled(d, hn::Neg(x))));
}

template <class D, class V = hn::VFromD<D>>
HWY_INLINE bool SiluDirectRange(D d, V x) {
  return hn::AllTrue(d, hn::Le(hn::Abs(x), hn::Set(d, internal::ExpConstants::kUnscaledMax)));  // false for NaN
}

template <class D, class V = hn::VFromD<D>>
HWY_INLINE V GeluTanh(D d, V x) {
  using C = internal::ActivationConstants;
#if HWY_TARGET == HWY_SCALAR
  // One lane: at or below -kGeluTanhClamp, -0 as activation_scalar.h (see TimesSigmoid's note).
  if (HWY_UNLIKELY(hn::AllTrue(d, hn::Le(x, hn::Set(d, -C::kGeluTanhClamp))))) return hn::Set(d, -0.0f);
#endif
  const V a = hn::Min(hn::Abs(x), hn::Set(d, C::kGeluTanhClamp));
  // Every lane below kGeluTanhTiny (false for a NaN lane): the factor at 0, as activation_scalar.h.
  if (HWY_UNLIKELY(hn::AllTrue(d, hn::Lt(a, hn::Set(d, C::kGeluTanhTiny))))) {
    return TimesSigmoid(d, x, a, hn::Set(d, C::kTwoTo64));
  }
  // z = kC1 a + kC3 a^3 as z_hi + z_lo (GeluTanhArgument in activation_scalar.h).
  const V c1_hi = hn::Set(d, C::kTanhC1Hi);
  const V c3_hi = hn::Set(d, C::kTanhC3Hi);
  const V a2 = hn::Mul(a, a);
  const V a2_lo = TwoProductError(d, a, a, a2);
  const V c3a2 = hn::Mul(c3_hi, a2);
  const V c3a2_lo = TwoProductError(d, c3_hi, a2, c3a2);
  const V t = hn::Add(c1_hi, c3a2);
  const V t_minus_c1 = hn::Sub(t, c1_hi);  // Knuth's 2Sum: c1 + c3a2 = t + t_sum_error exactly
  const V t_sum_error = hn::Add(hn::Sub(c1_hi, hn::Sub(t, t_minus_c1)), hn::Sub(c3a2, t_minus_c1));
  const V corrections =
      hn::Add(hn::MulAdd(c3_hi, a2_lo, c3a2_lo), hn::MulAdd(hn::Set(d, C::kTanhC3Lo), a2, hn::Set(d, C::kTanhC1Lo)));
  const V t_lo = hn::Add(t_sum_error, corrections);
  const V z = hn::Mul(a, t);
  const V z_lo = hn::MulAdd(a, t_lo, TwoProductError(d, a, t, z));
  return TimesSigmoid(d, x, a, ExpScaledBy64(d, hn::Neg(z), hn::Neg(z_lo), hn::Set(d, 1.0f)));
}

// See GeluErfMillsRatio in activation_scalar.h.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V GeluErfMillsRatio(D d, V y) {
  using C = internal::ActivationConstants;
  V p = hn::Set(d, C::kP4);
  p = hn::MulAdd(p, y, hn::Set(d, C::kP3));
  p = hn::MulAdd(p, y, hn::Set(d, C::kP2));
  p = hn::MulAdd(p, y, hn::Set(d, C::kP1));
  p = hn::MulAdd(p, y, hn::Set(d, C::kP0));
  V r = hn::Set(d, C::kR5);
  r = hn::MulAdd(r, y, hn::Set(d, C::kR4));
  r = hn::MulAdd(r, y, hn::Set(d, C::kR3));
  r = hn::MulAdd(r, y, hn::Set(d, C::kR2));
  r = hn::MulAdd(r, y, hn::Set(d, C::kR1));
  r = hn::MulAdd(r, y, hn::Set(d, 1.0f));
  return hn::Div(r, hn::MulAdd(hn::Mul(hn::Set(d, C::kSqrt2Pi), y), r, p));
}

template <class D, class V = hn::VFromD<D>>
HWY_INLINE V GeluErf(D d, V x) {
  using C = internal::ActivationConstants;
  const V a = hn::Min(hn::Abs(x), hn::Set(d, C::kGeluErfClamp));
  V big_phi = hn::Set(d, C::kTwoTo63);
  // Unless every lane is below kGeluErfTiny (false for a NaN lane; then the factor at 0, as activation_scalar.h).
  if (HWY_LIKELY(!hn::AllTrue(d, hn::Lt(a, hn::Set(d, C::kGeluErfTiny))))) {
    const V a2 = hn::Mul(a, a);
    const V a2_lo = TwoProductError(d, a, a, a2);
    const V minus_half = hn::Set(d, -0.5f);
    big_phi = ExpScaledBy64(d, hn::Mul(minus_half, a2), hn::Mul(minus_half, a2_lo), GeluErfMillsRatio(d, a));
  }
  const V one = hn::Set(d, 1.0f);
  const V two_to_minus_64 = hn::Set(d, C::kTwoToMinus64);
  const auto negative = hn::Lt(x, hn::Zero(d));
  // x < 0: (-a Phi(-a) 2^64) 2^-64; x >= 0: x (1 - Phi(-x)).
  const V factor = hn::IfThenElse(negative, big_phi, hn::NegMulAdd(big_phi, two_to_minus_64, one));
  const V xn = hn::IfThenElse(negative, hn::Neg(a), x);
  return hn::Mul(hn::Mul(xn, factor), hn::IfThenElse(negative, two_to_minus_64, one));
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// One instruction where Highway's two (a compare into a mask, a masked zeroing) cost the loop a third of its
// throughput: AVX-512's vfixupimmps classifies each lane and replaces it by a table entry per class. The table
// 0x08080800 gives +0 (response 8) for zeros, -inf and negative finite lanes, and keeps the lane (response 0, the
// destination, which is x) for NaNs, +1, +inf and positive finite lanes (subnormals included, as the compare
// would, and as 0 under DAZ, as the compare would too). Its range sibling vrangeps cannot: it returns the other
// operand for a quiet NaN.
HWY_INLINE hn::Vec512<float> Relu(hn::Full512<float> /* d */, hn::Vec512<float> x) {
  return hn::Vec512<float>{_mm512_fixupimm_ps(x.raw, x.raw, _mm512_set1_epi32(0x08080800), 0)};
}
#endif

template <class D, class V = hn::VFromD<D>>
HWY_INLINE V Relu(D d, V x) {
  return hn::IfThenZeroElse(hn::Le(x, hn::Zero(d)), x);  // NaN compares false and stays
}

// The kernels as function objects, so that each array loop is instantiated with its activation inlined.
struct GeluErfOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return GeluErf(d, x);
  }
};
struct GeluTanhOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return GeluTanh(d, x);
  }
};
struct SiluOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
#if HWY_TARGET == HWY_SCALAR
    // One lane: below kSiluTiny the factor at 0, as activation_scalar.h; on either route below the result rounds
    // to the same x / 2 in round to nearest (see TimesSigmoid's note).
    const V a = hn::Abs(x);
    if (HWY_UNLIKELY(hn::AllTrue(d, hn::Lt(a, hn::Set(d, internal::ActivationConstants::kSiluTiny))))) {
      return TimesSigmoid(d, x, a, hn::Set(d, internal::ActivationConstants::kTwoTo64));
    }
#endif
#if EDGEATTN_SILU_DIRECT
    if (HWY_LIKELY(SiluDirectRange(d, x))) return SiluDirect(d, x);
#endif
    return Silu(d, x);
  }
};
struct ReluOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const {
    return Relu(d, x);
  }
};

// Whether the array loops take two vectors per step: two independent evaluations of the activation in flight, and
// half the loop's own operations (SIMD targets; the one-lane targets of the microcontrollers keep one copy of each
// activation's code). On CPU family 26, ReLU over 4096 floats 0.96 -> 1.02-1.04x Eigen, GELU and SiLU 2-4% faster
// (docs/performance.md, "Softmax rows of two to four vectors in registers", its last paragraph).
#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
constexpr bool kActivationPairs = true;
#else
constexpr bool kActivationPairs = false;
#endif

// y[i] = op(x[i]); y == x allowed (each vector is loaded before it is stored).
template <class Op>
HWY_INLINE void MapArray(const float* x, float* y, size_t n, Op op) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  if constexpr (kActivationPairs) {
    for (; i + 2 * N <= n; i += 2 * N) {
      const auto x0 = hn::LoadU(d, x + i), x1 = hn::LoadU(d, x + i + N);
      hn::StoreU(op(d, x0), d, y + i);
      hn::StoreU(op(d, x1), d, y + i + N);
    }
  }
  for (; i + N <= n; i += N) hn::StoreU(op(d, hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    const size_t rest = n - i;
    StoreTail(d, op(d, LoadTail(d, x + i, rest)), y + i, rest);
  }
}

// y[i] = op(gate[i]) * up[i]; y may alias gate or up.
template <class Op>
HWY_INLINE void MapGatedArray(const float* gate, const float* up, float* y, size_t n, Op op) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  if constexpr (kActivationPairs) {
    for (; i + 2 * N <= n; i += 2 * N) {
      const auto g0 = hn::LoadU(d, gate + i), g1 = hn::LoadU(d, gate + i + N);
      const auto u0 = hn::LoadU(d, up + i), u1 = hn::LoadU(d, up + i + N);
      hn::StoreU(hn::Mul(op(d, g0), u0), d, y + i);
      hn::StoreU(hn::Mul(op(d, g1), u1), d, y + i + N);
    }
  }
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::Mul(op(d, hn::LoadU(d, gate + i)), hn::LoadU(d, up + i)), d, y + i);
  }
  if (i < n) {
    const size_t rest = n - i;
    StoreTail(d, hn::Mul(op(d, LoadTail(d, gate + i, rest)), LoadTail(d, up + i, rest)), y + i, rest);
  }
}

// act is valid (checked by the caller); the choice is made once, before the loop.
inline void ActivationArray(const float* x, float* y, size_t n, Activation act) {
#if HWY_TARGET == HWY_SCALAR  // one lane: the scalar path's loop (docs/performance.md, "One lane")
  return internal::ActivationArrayScalar(x, y, n, act);
#endif
  switch (act) {
    case Activation::kGeluErf:
      return MapArray(x, y, n, GeluErfOp());
    case Activation::kGeluTanh:
      return MapArray(x, y, n, GeluTanhOp());
    case Activation::kSilu:
      return MapArray(x, y, n, SiluOp());
    case Activation::kRelu:
      return MapArray(x, y, n, ReluOp());
  }
}

inline void GatedActivationArray(const float* gate, const float* up, float* y, size_t n, Activation act) {
#if HWY_TARGET == HWY_SCALAR  // one lane: the scalar path's loop (docs/performance.md, "One lane")
  return internal::GatedActivationArrayScalar(gate, up, y, n, act);
#endif
  switch (act) {
    case Activation::kGeluErf:
      return MapGatedArray(gate, up, y, n, GeluErfOp());
    case Activation::kGeluTanh:
      return MapGatedArray(gate, up, y, n, GeluTanhOp());
    case Activation::kSilu:
      return MapGatedArray(gate, up, y, n, SiluOp());
    case Activation::kRelu:
      return MapGatedArray(gate, up, y, n, ReluOp());
  }
}

inline void AddArrays(const float* a, const float* b, float* y, size_t n) {
#if HWY_TARGET == HWY_SCALAR  // one lane: the scalar path's loop (docs/performance.md, "One lane")
  return internal::AddArraysScalar(a, b, y, n);
#endif
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Add(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, y + i);
  if (i < n) {
    const size_t rest = n - i;
    StoreTail(d, hn::Add(LoadTail(d, a + i, rest), LoadTail(d, b + i, rest)), y + i, rest);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

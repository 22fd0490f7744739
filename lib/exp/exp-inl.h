// SPDX-License-Identifier: Apache-2.0
// edgeattn's exp on Highway vectors: the same operations as exp_scalar.h, one vector at a time.

#if defined(EDGEATTN_LIB_EXP_EXP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_EXP_EXP_INL_H_
#undef EDGEATTN_LIB_EXP_EXP_INL_H_
#else
#define EDGEATTN_LIB_EXP_EXP_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/exp/exp_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpPolynomial(D d, V r) {
  using C = internal::ExpConstants;
  V p = hn::Set(d, C::kC6);
  p = hn::MulAdd(p, r, hn::Set(d, C::kC5));
  p = hn::MulAdd(p, r, hn::Set(d, C::kC4));
  p = hn::MulAdd(p, r, hn::Set(d, C::kC3));
  p = hn::MulAdd(p, r, hn::Set(d, C::kC2));
  p = hn::MulAdd(p, r, hn::Set(d, C::kC1));
  return p;
}

// The same polynomial by Estrin's scheme: one multiply more, a dependency chain of three operations instead of
// five (see ExpPolynomialEstrin in exp_scalar.h).
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpPolynomialEstrin(D d, V r) {
  using C = internal::ExpConstants;
  const V r2 = hn::Mul(r, r);
  const V a = hn::MulAdd(hn::Set(d, C::kC2), r, hn::Set(d, C::kC1));
  const V b = hn::MulAdd(hn::Set(d, C::kC4), r, hn::Set(d, C::kC3));
  const V c = hn::MulAdd(hn::Set(d, C::kC6), r, hn::Set(d, C::kC5));
  return hn::MulAdd(hn::MulAdd(c, r2, b), r2, a);
}

// x log2(e) + magic rounded to nearest whatever the caller's rounding mode, where one instruction can: AVX-512's
// embedded rounding ({rn-sae}) overrides MXCSR.RC for this FMA alone (and raises no flags). It is used only
// once a directed mode has been seen: the form takes no memory operand, so in the default environment it would
// cost the exp loops a constant load per vector. The upper lanes of a widened 128/256-bit vector are never read.
#undef EDGEATTN_EXP_EXPLICIT_NEAREST
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define EDGEATTN_EXP_EXPLICIT_NEAREST 1
HWY_INLINE hn::Vec512<float> MulAddNearest(hn::Vec512<float> a, hn::Vec512<float> b, hn::Vec512<float> c) {
  return hn::Vec512<float>{_mm512_fmadd_round_ps(a.raw, b.raw, c.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
HWY_INLINE hn::Vec256<float> MulAddNearest(hn::Vec256<float> a, hn::Vec256<float> b, hn::Vec256<float> c) {
  const __m512 r = _mm512_fmadd_round_ps(_mm512_castps256_ps512(a.raw), _mm512_castps256_ps512(b.raw),
                                         _mm512_castps256_ps512(c.raw), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return hn::Vec256<float>{_mm512_castps512_ps256(r)};
}
template <size_t N>
HWY_INLINE hn::Vec128<float, N> MulAddNearest(hn::Vec128<float, N> a, hn::Vec128<float, N> b, hn::Vec128<float, N> c) {
  const __m512 r = _mm512_fmadd_round_ps(_mm512_castps128_ps512(a.raw), _mm512_castps128_ps512(b.raw),
                                         _mm512_castps128_ps512(c.raw), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return hn::Vec128<float, N>{_mm512_castps512_ps128(r)};
}
#else
#define EDGEATTN_EXP_EXPLICIT_NEAREST 0
#endif

// t = x log2(e) + magic with n = round(x log2 e) in t's low bits (see StepToNearest in exp_scalar.h). kToNearest:
// the caller's mode rounds to nearest, and t is the plain MulAdd.
template <bool kToNearest, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRoundedSum(D d, V x, V magic) {
  using C = internal::ExpConstants;
  if constexpr (kToNearest) return hn::MulAdd(x, hn::Set(d, C::kLog2e), magic);
#if EDGEATTN_EXP_EXPLICIT_NEAREST
  return MulAddNearest(x, hn::Set(d, C::kLog2e), magic);
#else
  const V t = hn::MulAdd(x, hn::Set(d, C::kLog2e), magic);
  const hn::RebindToSigned<D> di;
  const V r_hi = hn::NegMulAdd(hn::Sub(t, magic), hn::Set(d, C::kLn2Hi), x);
  const V threshold = hn::Set(d, C::kStepThreshold);
  // A true mask is -1 as an integer: subtracting it adds one to n.
  const auto up = hn::BitCast(di, hn::VecFromMask(d, hn::Gt(r_hi, threshold)));
  const auto down = hn::BitCast(di, hn::VecFromMask(d, hn::Lt(r_hi, hn::Neg(threshold))));
  return hn::BitCast(d, hn::Add(hn::Sub(hn::BitCast(di, t), up), down));
#endif
}

// Whether ExpRoundedSum<true> is right in the caller's environment: when the FPU rounds to nearest (read once
// per call or row, outside the loops).
HWY_INLINE bool ExpToNearest() { return internal::RoundsToNearest(); }

// See ExpRr2P6 in exp_scalar.h. Directed modes: out-of-range lanes compute garbage that the final selects
// replace.
template <bool kToNearest = true, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6(D d, V x) {
  using C = internal::ExpConstants;
  const hn::RebindToSigned<D> di;
  V xc = x;
  if constexpr (kToNearest) xc = hn::Min(hn::Max(x, hn::Set(d, C::kClampLow)), hn::Set(d, C::kClampHigh));
  const V magic = hn::Set(d, C::kRoundMagic);
  const V t = ExpRoundedSum<kToNearest>(d, xc, magic);
  const V n_float = hn::Sub(t, magic);
  const auto n = hn::Sub(hn::BitCast(di, t), hn::BitCast(di, magic));
  V r = hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Hi), xc);
  r = hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Lo), r);
  const V p = ExpPolynomial(d, r);
  const auto n1 = hn::ShiftRight<1>(n);
  const auto n2 = hn::Sub(n, n1);
  const auto bias = hn::Set(di, 127);
  const V s1 = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(n1, bias)));
  const V s2 = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(n2, bias)));
  V f = hn::Mul(hn::MulAdd(hn::Mul(s1, r), p, s1), s2);
  if constexpr (!kToNearest) {
    f = hn::IfThenElse(hn::Gt(x, hn::Set(d, C::kOverflowArg)), hn::Set(d, internal::kInfinity), f);
    f = hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, C::kUnderflowArg)), f);
  }
  // Min/Max may drop a NaN (x86 returns the second operand), and a NaN lane's arithmetic may lose its payload;
  // give back the input, quieted.
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), f);
}

// The fast core shared by ExpRr2P6Shifted and ExpRr2P6InRange: n = round(x log2(e)) taken from the biased
// rounding constant, r = x - n ln2 (+ lo when kWithLo), and e^x = 2^(n+64) (1 + r p(r)) 2^-64, with 2^(n+64)
// built straight from t's bits (one factor, normal for every n >= -126 - 64: s*r is never subnormal).
// kTimes2To64: return e^x 2^64, leaving out the last (exact) multiply, for a caller whose factor cancels.
template <bool kWithLo, bool kToNearest, bool kTimes2To64 = false, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpScaledBy64(D d, V x, V lo) {
  using C = internal::ExpConstants;
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, C::kRoundMagicBiased);
  const V t = ExpRoundedSum<kToNearest>(d, x, magic);
  const V n_float = hn::Sub(t, magic);
  const V r_hi = hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Hi), x);
  if constexpr (kWithLo) {
    // Shifted: on the dependency chain of a softmax row. lo - n ln2lo beside the reduction, Estrin's scheme.
    const V r = hn::Add(r_hi, hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Lo), lo));
    const V p = ExpPolynomialEstrin(d, r);
    const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));  // 2^(n+64)
    const V e64 = hn::MulAdd(hn::Mul(s, r), p, s);
    if constexpr (kTimes2To64) return e64;
    return hn::Mul(e64, hn::Set(d, C::kTwoToMinus64));
  }
  const V r = hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Lo), r_hi);
  const V p = ExpPolynomial(d, r);
  const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));  // 2^(n+64)
  return hn::Mul(hn::MulAdd(hn::Mul(s, r), p, s), hn::Set(d, C::kTwoToMinus64));
}

// See ExpRr2P6Shifted in exp_scalar.h: e^(dv + d_lo) for dv <= 0, +0 below kShiftedMinArg, NaN for NaN.
template <bool kToNearest = true, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6Shifted(D d, V dv, V d_lo) {
  using C = internal::ExpConstants;
  // Lanes below the threshold (and -inf, whose r is NaN) are +0; NaN lanes compare false and stay NaN.
  return hn::IfThenZeroElse(hn::Lt(dv, hn::Set(d, C::kShiftedMinArg)), ExpScaledBy64<true, kToNearest>(d, dv, d_lo));
}

// ExpRr2P6Shifted times 2^64 (its last multiply, exact, left out): normal wherever ExpRr2P6Shifted is not +0, so
// a quotient of such terms (softmax's e / sum) has the same bits, one multiply per vector cheaper.
template <bool kToNearest = true, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6ShiftedTimes2To64(D d, V dv, V d_lo) {
  using C = internal::ExpConstants;
  return hn::IfThenZeroElse(hn::Lt(dv, hn::Set(d, C::kShiftedMinArg)),
                            ExpScaledBy64<true, kToNearest, true>(d, dv, d_lo));
}

// ExpRr2P6 for lanes known to lie in [kFastLow, kFastHigh] (no clamp, no NaN, one scale factor): 12 operations
// instead of 24, and the same result (see ExpConstants::kFastLow).
template <bool kToNearest = true, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6InRange(D d, V x) {
#if HWY_TARGET == HWY_SCALAR
  // One lane: 1 below kTinyArg, as exp_scalar.h (the same bits, without the subnormal products). The vector
  // targets do not test for it: one more test per vector would cost every call.
  if (kToNearest && hn::AllTrue(d, hn::Lt(hn::Abs(x), hn::Set(d, internal::ExpConstants::kTinyArg)))) {
    return hn::Set(d, 1.0f);
  }
#endif
  return ExpScaledBy64<false, kToNearest>(d, x, x);
}

// ExpRr2P6InRange for |x| <= kUnscaledMax (43), rounding to nearest: n is in [-63, 63], so 2^n is itself a
// normal float, t's bits give it directly and the final multiply by 2^-64 is left out (one multiply fewer on the
// FMA pipes). The same bits: s * r stays far above FLT_MIN, so every product is ExpRr2P6InRange's times an exact
// power of two.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6Unscaled(D d, V x) {
  using C = internal::ExpConstants;
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, C::kRoundMagicUnscaled);
  const V t = hn::MulAdd(x, hn::Set(d, C::kLog2e), magic);
  const V n_float = hn::Sub(t, magic);
  const V r = hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Lo), hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Hi), x));
  const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));  // 2^n
  return hn::MulAdd(hn::Mul(s, r), ExpPolynomial(d, r), s);
}

template <class D, class V = hn::VFromD<D>>
HWY_INLINE hn::Mask<D> ExpInFastRange(D d, V x) {
  using C = internal::ExpConstants;
  return hn::And(hn::Ge(x, hn::Set(d, C::kFastLow)), hn::Le(x, hn::Set(d, C::kFastHigh)));  // false for NaN
}

// out[i] = e^in[i]; in == out allowed. Pairs of vectors whose lanes all lie in the fast range (softmax-like
// inputs, the usual case) take ExpRr2P6InRange; any other pair the general ExpRr2P6.
template <bool kToNearest>
HWY_INLINE void ExpArrayIn(const float* in, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto x0 = hn::LoadU(d, in + i);
    const auto x1 = hn::LoadU(d, in + i + N);
    if (hn::AllTrue(d, hn::And(ExpInFastRange(d, x0), ExpInFastRange(d, x1)))) {
      hn::StoreU(ExpRr2P6InRange<kToNearest>(d, x0), d, out + i);
      hn::StoreU(ExpRr2P6InRange<kToNearest>(d, x1), d, out + i + N);
    } else {
      hn::StoreU(ExpRr2P6<kToNearest>(d, x0), d, out + i);
      hn::StoreU(ExpRr2P6<kToNearest>(d, x1), d, out + i + N);
    }
  }
  for (; i + N <= n; i += N) {
    hn::StoreU(ExpRr2P6<kToNearest>(d, hn::LoadU(d, in + i)), d, out + i);
  }
  if (i < n) {
    const size_t rest = n - i;
    StoreTail(d, ExpRr2P6<kToNearest>(d, LoadTail(d, in + i, rest)), out + i, rest);
  }
}

inline void ExpArray(const float* in, float* out, size_t n) {
#if HWY_TARGET == HWY_SCALAR  // one lane: the scalar path's loop (docs/performance.md, "One lane")
  return internal::ExpArrayScalar(in, out, n);
#endif
  if (HWY_LIKELY(ExpToNearest())) return ExpArrayIn<true>(in, out, n);
  ExpArrayIn<false>(in, out, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

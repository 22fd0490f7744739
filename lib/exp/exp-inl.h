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

// See ExpRr2P6 in exp_scalar.h.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6(D d, V x) {
  using C = internal::ExpConstants;
  const hn::RebindToSigned<D> di;
  const V xc = hn::Min(hn::Max(x, hn::Set(d, C::kClampLow)), hn::Set(d, C::kClampHigh));
  const V magic = hn::Set(d, C::kRoundMagic);
  const V t = hn::MulAdd(xc, hn::Set(d, C::kLog2e), magic);
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
  const V f = hn::Mul(hn::MulAdd(hn::Mul(s1, r), p, s1), s2);
  // Min/Max may drop a NaN (x86 returns the second operand); put it back, quieted.
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), f);
}

// The fast core shared by ExpRr2P6Shifted and ExpRr2P6InRange: n = round(x log2(e)) taken from the biased
// rounding constant, r = x - n ln2 (+ lo when kWithLo), and e^x = 2^(n+64) (1 + r p(r)) 2^-64, with 2^(n+64)
// built straight from t's bits (one factor, normal for every n >= -126 - 64: s*r is never subnormal).
template <bool kWithLo, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpScaledBy64(D d, V x, V lo) {
  using C = internal::ExpConstants;
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, C::kRoundMagicBiased);
  const V t = hn::MulAdd(x, hn::Set(d, C::kLog2e), magic);
  const V n_float = hn::Sub(t, magic);
  const V r_hi = hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Hi), x);
  if constexpr (kWithLo) {
    // Shifted: on the dependency chain of a softmax row. lo - n ln2lo beside the reduction, Estrin's scheme.
    const V r = hn::Add(r_hi, hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Lo), lo));
    const V p = ExpPolynomialEstrin(d, r);
    const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));  // 2^(n+64)
    return hn::Mul(hn::MulAdd(hn::Mul(s, r), p, s), hn::Set(d, C::kTwoToMinus64));
  }
  const V r = hn::NegMulAdd(n_float, hn::Set(d, C::kLn2Lo), r_hi);
  const V p = ExpPolynomial(d, r);
  const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));  // 2^(n+64)
  return hn::Mul(hn::MulAdd(hn::Mul(s, r), p, s), hn::Set(d, C::kTwoToMinus64));
}

// See ExpRr2P6Shifted in exp_scalar.h: e^(dv + d_lo) for dv <= 0, +0 below kShiftedMinArg, NaN for NaN.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6Shifted(D d, V dv, V d_lo) {
  using C = internal::ExpConstants;
  // Lanes below the threshold (and -inf, whose r is NaN) are +0; NaN lanes compare false and stay NaN.
  return hn::IfThenZeroElse(hn::Lt(dv, hn::Set(d, C::kShiftedMinArg)), ExpScaledBy64<true>(d, dv, d_lo));
}

// ExpRr2P6 for lanes known to lie in [kFastLow, kFastHigh] (no clamp, no NaN, one scale factor): 12 operations
// instead of 24, and the same result (see ExpConstants::kFastLow).
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpRr2P6InRange(D d, V x) {
  return ExpScaledBy64<false>(d, x, x);
}

template <class D, class V = hn::VFromD<D>>
HWY_INLINE hn::Mask<D> ExpInFastRange(D d, V x) {
  using C = internal::ExpConstants;
  return hn::And(hn::Ge(x, hn::Set(d, C::kFastLow)), hn::Le(x, hn::Set(d, C::kFastHigh)));  // false for NaN
}

// out[i] = e^in[i]; in == out allowed. Pairs of vectors whose lanes all lie in the fast range (softmax-like
// inputs, the usual case) take ExpRr2P6InRange; any other pair the general ExpRr2P6.
inline void ExpArray(const float* in, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto x0 = hn::LoadU(d, in + i);
    const auto x1 = hn::LoadU(d, in + i + N);
    if (hn::AllTrue(d, hn::And(ExpInFastRange(d, x0), ExpInFastRange(d, x1)))) {
      hn::StoreU(ExpRr2P6InRange(d, x0), d, out + i);
      hn::StoreU(ExpRr2P6InRange(d, x1), d, out + i + N);
    } else {
      hn::StoreU(ExpRr2P6(d, x0), d, out + i);
      hn::StoreU(ExpRr2P6(d, x1), d, out + i + N);
    }
  }
  for (; i + N <= n; i += N) {
    hn::StoreU(ExpRr2P6(d, hn::LoadU(d, in + i)), d, out + i);
  }
  if (i < n) {
    const size_t rest = n - i;
    StoreTail(d, ExpRr2P6(d, LoadTail(d, in + i, rest)), out + i, rest);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

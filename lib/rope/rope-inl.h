// Rotary position embedding on Highway double vectors: sin and cos of Lanes pairs' angles at once (the
// positional encoding's reduction and polynomials), then the rotation of those pairs in every head. Targets
// without double vectors (ARMv7 NEON) run the scalar loop.

#if defined(EDGEATTN_LIB_ROPE_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ROPE_ROPE_INL_H_
#undef EDGEATTN_LIB_ROPE_ROPE_INL_H_
#else
#define EDGEATTN_LIB_ROPE_ROPE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/common/stack_vector.h"
#include "lib/rope/rope_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

template <class D, size_t kCount, class V = hn::VFromD<D>>
HWY_INLINE V RopeHorner(D d, V z, const double (&coefficients)[kCount]) {
  V p = hn::Zero(d);
  for (double c : coefficients) p = hn::MulAdd(p, z, hn::Set(d, c));
  return p;
}

// sin and cos of angles in [0, 2^24 * pi/2), the same steps as internal::SinCos.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE void RopeSinCos(D d, V angle, V* sin_out, V* cos_out) {
  using C = internal::PeConstants;
  using T = internal::PeTaylor;
  const hn::RebindToUnsigned<D> du;
  const auto magic = hn::Set(d, C::kRoundMagic);
  const auto magic_sum = hn::MulAdd(angle, hn::Set(d, C::kTwoOverPi), magic);
  const auto k = hn::Sub(magic_sum, magic);
  auto r = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2A), angle);
  r = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2B), r);
  r = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2C), r);
  const auto z = hn::Mul(r, r);
  const auto s = hn::MulAdd(hn::Mul(r, z), RopeHorner(d, z, T::kSin), r);
  const auto c = hn::MulAdd(z, RopeHorner(d, z, T::kCos), hn::Set(d, 1.0));
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

inline void RopeRows(const internal::RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  // Capped at one bounded vector (the same tag as ScalableTag on every target but RVV): the lane buffers below.
  const hn::CappedTag<double, internal::kMaxStackVectorBytes / sizeof(double)> d;
  const size_t N = hn::Lanes(d);
  const size_t pairs = p.rotary_dim / 2;
  const size_t token_stride = p.num_heads * p.head_dim;
  HWY_ALIGN double lane_buf[hn::MaxLanes(decltype(d)())];
  HWY_ALIGN double sin_buf[hn::MaxLanes(decltype(d)())];
  HWY_ALIGN double cos_buf[hn::MaxLanes(decltype(d)())];
  static_assert(sizeof(lane_buf) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  // Under a directed rounding mode the scalar loop's range reductions step to the nearest integer; this loop's
  // magic-constant rounding would not.
  if (!internal::DoublesRoundToNearest()) return internal::RopeScalar(p, x, seq_len, first_position);
  for (size_t i0 = 0; i0 < pairs; i0 += N) {
    const size_t count = pairs - i0 < N ? pairs - i0 : N;
    for (size_t l = 0; l < N; ++l) {
      lane_buf[l] = l < count ? internal::RopeFrequency(i0 + l, p.rotary_dim, p.log_base, true) : 0.0;
    }
    const auto w = hn::Load(d, lane_buf);
    for (size_t t = 0; t < seq_len; ++t) {
      hn::VFromD<decltype(d)> s, c;
      RopeSinCos(d, hn::Mul(hn::Set(d, static_cast<double>(first_position + t)), w), &s, &c);
      hn::Store(s, d, sin_buf);
      hn::Store(c, d, cos_buf);
      float* token = x + t * token_stride;
      for (size_t l = 0; l < count; ++l) internal::RotatePairAllHeads(p, token, i0 + l, sin_buf[l], cos_buf[l]);
    }
  }
}

#else  // no double vectors on this target

inline void RopeRows(const internal::RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  internal::RopeScalar(p, x, seq_len, first_position);
}

#endif  // HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

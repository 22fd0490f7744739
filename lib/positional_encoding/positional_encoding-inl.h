// Sinusoidal positional encoding on Highway double vectors: Lanes column pairs at a time, one row after the
// other; the same operations as positional_encoding_scalar.h. Targets without double vectors (ARMv7 NEON)
// run the scalar loop.

#if defined(EDGEATTN_LIB_POSITIONAL_ENCODING_POSITIONAL_ENCODING_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_POSITIONAL_ENCODING_POSITIONAL_ENCODING_INL_H_
#undef EDGEATTN_LIB_POSITIONAL_ENCODING_POSITIONAL_ENCODING_INL_H_
#else
#define EDGEATTN_LIB_POSITIONAL_ENCODING_POSITIONAL_ENCODING_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/common/stack_vector.h"
#include "lib/positional_encoding/positional_encoding_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

template <class D, size_t kCount, class V = hn::VFromD<D>>
HWY_INLINE V Horner(D d, V z, const double (&coefficients)[kCount]) {
  V p = hn::Zero(d);
  for (double c : coefficients) p = hn::MulAdd(p, z, hn::Set(d, c));
  return p;
}

template <bool kToNearest>
HWY_INLINE void AddPositionalEncodingRowsIn(float* x, size_t seq_len, size_t d_model, size_t first_position) {
  using C = internal::PeConstants;
  using T = internal::PeTaylor;
  // The full vector on every target but RVV, whose register groups would outgrow the lane buffers' bound.
  using D = hn::CappedTag<double, internal::kMaxStackVectorBytes / sizeof(double)>;
  const D d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const size_t N = hn::Lanes(d);
  const size_t pairs = (d_model + 1) / 2;
  HWY_ALIGN double lane_buf[hn::MaxLanes(D())];
  HWY_ALIGN double sin_buf[hn::MaxLanes(D())];
  HWY_ALIGN double cos_buf[hn::MaxLanes(D())];
  static_assert(sizeof(lane_buf) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  for (size_t i0 = 0; i0 < pairs; i0 += N) {
    const size_t count = pairs - i0 < N ? pairs - i0 : N;
    for (size_t l = 0; l < N; ++l) lane_buf[l] = l < count ? internal::InverseFrequency(i0 + l, d_model, kToNearest) : 0.0;
    const auto w = hn::Load(d, lane_buf);
    for (size_t r = 0; r < seq_len; ++r) {
      const auto angle = hn::Mul(hn::Set(d, static_cast<double>(first_position + r)), w);
      const auto magic = hn::Set(d, C::kRoundMagic);
      auto magic_sum = hn::MulAdd(angle, hn::Set(d, C::kTwoOverPi), magic);
      if (!kToNearest) {  // see StepToNearestDouble
        const auto r_hi = hn::NegMulAdd(hn::Sub(magic_sum, magic), hn::Set(d, C::kPiOver2A), angle);
        const auto threshold = hn::Set(d, C::kTrigStepThreshold);
        const auto one = hn::Set(d, 1.0);
        magic_sum = hn::IfThenElse(hn::Gt(r_hi, threshold), hn::Add(magic_sum, one), magic_sum);
        magic_sum = hn::IfThenElse(hn::Lt(r_hi, hn::Neg(threshold)), hn::Sub(magic_sum, one), magic_sum);
      }
      const auto k = hn::Sub(magic_sum, magic);
      auto red = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2A), angle);
      red = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2B), red);
      red = hn::NegMulAdd(k, hn::Set(d, C::kPiOver2C), red);
      const auto z = hn::Mul(red, red);
      const auto s = hn::MulAdd(hn::Mul(red, z), Horner(d, z, T::kSin), red);
      const auto c = hn::MulAdd(z, Horner(d, z, T::kCos), hn::Set(d, 1.0));
      const auto quadrant = hn::BitCast(du, magic_sum);
      const auto one = hn::Set(du, 1), two = hn::Set(du, 2);
      const auto odd = hn::RebindMask(d, hn::Eq(hn::And(quadrant, one), one));
      const auto neg_sin = hn::RebindMask(d, hn::Eq(hn::And(quadrant, two), two));
      const auto neg_cos = hn::RebindMask(d, hn::Eq(hn::And(hn::Add(quadrant, one), two), two));
      const auto sin_abs = hn::IfThenElse(odd, c, s);
      const auto cos_abs = hn::IfThenElse(odd, s, c);
      hn::Store(hn::IfThenElse(neg_sin, hn::Neg(sin_abs), sin_abs), d, sin_buf);
      hn::Store(hn::IfThenElse(neg_cos, hn::Neg(cos_abs), cos_abs), d, cos_buf);
      float* row = x + r * d_model + 2 * i0;
      const size_t columns = d_model - 2 * i0;  // of this block and after it
      for (size_t l = 0; l < count; ++l) {
        row[2 * l] = static_cast<float>(static_cast<double>(row[2 * l]) + sin_buf[l]);
        if (2 * l + 1 < columns) row[2 * l + 1] = static_cast<float>(static_cast<double>(row[2 * l + 1]) + cos_buf[l]);
      }
    }
  }
}

inline void AddPositionalEncodingRows(float* x, size_t seq_len, size_t d_model, size_t first_position) {
  if (internal::DoublesRoundToNearest()) return AddPositionalEncodingRowsIn<true>(x, seq_len, d_model, first_position);
  AddPositionalEncodingRowsIn<false>(x, seq_len, d_model, first_position);
}

#else  // no double vectors on this target

inline void AddPositionalEncodingRows(float* x, size_t seq_len, size_t d_model, size_t first_position) {
  internal::AddPositionalEncodingScalar(x, seq_len, d_model, first_position);
}

#endif  // HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

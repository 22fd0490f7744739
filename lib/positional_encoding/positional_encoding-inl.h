// SPDX-License-Identifier: Apache-2.0
// Sinusoidal positional encoding on Highway double vectors: Lanes column pairs at a time, one row after the
// other; the same operations as positional_encoding_scalar.h (sin and cos: SinCosVec, sincos-inl.h). Targets
// without double vectors (ARMv7 NEON) run the scalar loop.

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
#include "lib/positional_encoding/sincos-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

template <bool kToNearest>
HWY_INLINE void AddPositionalEncodingRowsIn(float* x, size_t seq_len, size_t d_model, size_t first_position) {
  // The full vector on every target but RVV, whose register groups would outgrow the lane buffers' bound.
  using D = hn::CappedTag<double, internal::kMaxStackVectorBytes / sizeof(double)>;
  const D d;
  const size_t N = hn::Lanes(d);
  const size_t pairs = (d_model + 1) / 2;
  HWY_ALIGN double lane_buf[hn::MaxLanes(D())];
  HWY_ALIGN double sin_buf[hn::MaxLanes(D())];
  HWY_ALIGN double cos_buf[hn::MaxLanes(D())];
  static_assert(sizeof(lane_buf) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  for (size_t i0 = 0; i0 < pairs; i0 += N) {
    const size_t count = pairs - i0 < N ? pairs - i0 : N;
    for (size_t l = 0; l < N; ++l)
      lane_buf[l] = l < count ? internal::InverseFrequency(i0 + l, d_model, kToNearest) : 0.0;
    const auto w = hn::Load(d, lane_buf);
    for (size_t r = 0; r < seq_len; ++r) {
      const auto angle = hn::Mul(hn::Set(d, static_cast<double>(first_position + r)), w);
      hn::VFromD<D> sin_v, cos_v;
      SinCosVec<kToNearest>(d, angle, &sin_v, &cos_v);
      hn::Store(sin_v, d, sin_buf);
      hn::Store(cos_v, d, cos_buf);
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

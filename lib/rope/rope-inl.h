// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding on Highway double vectors: sin and cos of Lanes pairs' angles at once (SinCosVec,
// shared with the positional encoding), then the rotation of those pairs in every head. Targets without double
// vectors (ARMv7 NEON) run the scalar loop.

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
#include "lib/positional_encoding/sincos-inl.h"
#include "lib/rope/rope_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The table variant: the scalar path's loop (each product and sum rounded once, rope.h) on every Highway target,
// where a vector version would gain little over a table row already in cache; a backend may replace it.
inline void RopeWithTableRows(const internal::RopeProblem& p, const float* table, size_t table_first_position, float* x,
                              size_t seq_len, size_t first_position) {
  internal::RopeWithTableScalar(p, table, table_first_position, x, seq_len, first_position);
}

#if HWY_HAVE_FLOAT64 && HWY_HAVE_INTEGER64

// kToNearest: internal::DoublesRoundToNearest(), read once per call (the frequencies' and the angles' range
// reductions step to the nearest integer when false, as the scalar loop's do).
template <bool kToNearest>
HWY_INLINE void RopeRowsIn(const internal::RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  // Capped at one bounded vector (the same tag as ScalableTag on every target but RVV): the lane buffers below.
  const hn::CappedTag<double, internal::kMaxStackVectorBytes / sizeof(double)> d;
  const size_t N = hn::Lanes(d);
  const size_t pairs = p.rotary_dim / 2;
  const size_t token_stride = p.num_heads * p.head_dim;
  HWY_ALIGN double lane_buf[hn::MaxLanes(decltype(d)())];
  HWY_ALIGN double sin_buf[hn::MaxLanes(decltype(d)())];
  HWY_ALIGN double cos_buf[hn::MaxLanes(decltype(d)())];
  static_assert(sizeof(lane_buf) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  for (size_t i0 = 0; i0 < pairs; i0 += N) {
    const size_t count = pairs - i0 < N ? pairs - i0 : N;
    for (size_t l = 0; l < N; ++l) {
      lane_buf[l] = l < count ? internal::RopeFrequency(i0 + l, p.rotary_dim, p.log_base, kToNearest) : 0.0;
    }
    const auto w = hn::Load(d, lane_buf);
    for (size_t t = 0; t < seq_len; ++t) {
      hn::VFromD<decltype(d)> s, c;
      SinCosVec<kToNearest>(d, hn::Mul(hn::Set(d, static_cast<double>(first_position + t)), w), &s, &c);
      hn::Store(s, d, sin_buf);
      hn::Store(c, d, cos_buf);
      float* token = x + t * token_stride;
      for (size_t l = 0; l < count; ++l) internal::RotatePairAllHeads(p, token, i0 + l, sin_buf[l], cos_buf[l]);
    }
  }
}

inline void RopeRows(const internal::RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  if (internal::DoublesRoundToNearest()) return RopeRowsIn<true>(p, x, seq_len, first_position);
  RopeRowsIn<false>(p, x, seq_len, first_position);
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

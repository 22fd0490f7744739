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

// Pairs i0 .. i0 + Lanes(d) - 1 of every head of one token rotated by the angles whose sines and cosines are the
// lanes of s and c: RotatePair's operations on double lanes, in its order (the two products, their difference or
// sum, each rounded once in the caller's mode, then one rounding to float), so the bits are the scalar loop's.
// Interleaved pairs (2i, 2i + 1): each half of the block's 2 * Lanes(d) floats becomes one double vector with a
// pair in adjacent lanes, its partner's value in the swapped vector, and the sines and cosines duplicated per
// pair; even lanes take the difference, odd lanes the sum. Halves (i, i + rotary_dim / 2): one vector per member.
template <class D>
HWY_INLINE void RotateBlockAllHeads(D d, const internal::RopeProblem& p, float* token, size_t i0, hn::VFromD<D> s,
                                    hn::VFromD<D> c) {
  const hn::Rebind<float, D> df;
  const size_t N = hn::Lanes(d);
  if (p.half) {
    const size_t second = p.rotary_dim / 2;
    for (size_t h = 0; h < p.num_heads; ++h) {
      float* head = token + h * p.head_dim + i0;
      const auto a = hn::PromoteTo(d, hn::LoadU(df, head));
      const auto b = hn::PromoteTo(d, hn::LoadU(df, head + second));
      hn::StoreU(hn::DemoteTo(df, hn::Sub(hn::Mul(a, c), hn::Mul(b, s))), df, head);
      hn::StoreU(hn::DemoteTo(df, hn::Add(hn::Mul(b, c), hn::Mul(a, s))), df, head + second);
    }
    return;
  }
  const hn::RebindToSigned<D> di;
  const auto lane = hn::Iota(di, 0);
  const auto lower = hn::ShiftRight<1>(lane);  // lane k of a half holds pair k / 2 of it
  const auto upper = hn::Add(lower, hn::Set(di, static_cast<int64_t>(N / 2)));
  const auto odd = hn::RebindMask(d, hn::Eq(hn::And(lane, hn::Set(di, 1)), hn::Set(di, 1)));
  const auto lo = hn::IndicesFromVec(d, lower), hi = hn::IndicesFromVec(d, upper);
  const auto s_lo = hn::TableLookupLanes(s, lo), s_hi = hn::TableLookupLanes(s, hi);
  const auto c_lo = hn::TableLookupLanes(c, lo), c_hi = hn::TableLookupLanes(c, hi);
  for (size_t h = 0; h < p.num_heads; ++h) {
    float* half = token + h * p.head_dim + 2 * i0;
    for (size_t k = 0; k < 2; ++k, half += N) {
      const auto v = hn::PromoteTo(d, hn::LoadU(df, half));               // a0 b0 a1 b1 ...
      const auto cv = hn::Mul(v, k == 0 ? c_lo : c_hi);                   // a c, b c
      const auto sv = hn::Mul(hn::Reverse2(d, v), k == 0 ? s_lo : s_hi);  // b s, a s
      hn::StoreU(hn::DemoteTo(df, hn::IfThenElse(odd, hn::Add(cv, sv), hn::Sub(cv, sv))), df, half);
    }
  }
}

// kToNearest: internal::DoublesRoundToNearest(), read once per call (the frequencies' and the angles' range
// reductions step to the nearest integer when false, as the scalar loop's do).
template <bool kToNearest, class D>
HWY_INLINE void RopeRowsOn(D d, const internal::RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  const size_t N = hn::Lanes(d);
  const size_t pairs = p.rotary_dim / 2;
  const size_t token_stride = p.num_heads * p.head_dim;
  HWY_ALIGN double sin_buf[hn::MaxLanes(D())];
  HWY_ALIGN double cos_buf[hn::MaxLanes(D())];
  static_assert(sizeof(sin_buf) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  const hn::RebindToSigned<D> di;
  for (size_t i0 = 0; i0 < pairs; i0 += N) {
    const size_t count = pairs - i0 < N ? pairs - i0 : N;
    // The frequencies base^(-2i / rotary_dim) = e^t of the block's pairs i (lanes past `count` unused), pair 0's
    // exactly 1 as RopeFrequency's.
    const auto pair = hn::ConvertTo(d, hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<int64_t>(i0))));
    const auto exponent = hn::Div(hn::Neg(hn::Mul(hn::Add(pair, pair), hn::Set(d, p.log_base))),
                                  hn::Set(d, static_cast<double>(p.rotary_dim)));
    const auto w = hn::IfThenElse(hn::Eq(pair, hn::Zero(d)), hn::Set(d, 1.0), ExpSmallVec<kToNearest>(d, exponent));
    for (size_t t = 0; t < seq_len; ++t) {
      hn::VFromD<D> s, c;
      SinCosVec<kToNearest>(d, hn::Mul(hn::Set(d, static_cast<double>(first_position + t)), w), &s, &c);
      float* token = x + t * token_stride;
      if (count == N && N % 2 == 0) {
        RotateBlockAllHeads(d, p, token, i0, s, c);
        continue;
      }
      hn::Store(s, d, sin_buf);
      hn::Store(c, d, cos_buf);
      for (size_t l = 0; l < count; ++l) internal::RotatePairAllHeads(p, token, i0 + l, sin_buf[l], cos_buf[l]);
    }
  }
}

// Heads with fewer pairs than the vector has lanes (d = 8 on AVX-512: 4 pairs) take the half or quarter vector
// they fill, so their rotation runs on vectors too; the lanes' operations and so the bits are the same.
template <bool kToNearest>
HWY_INLINE void RopeRowsIn(const internal::RopeProblem& p, float* x, size_t seq_len, size_t first_position) {
  // Capped at one bounded vector (the same tag as ScalableTag on every target but RVV): the lane buffers above.
  const hn::CappedTag<double, internal::kMaxStackVectorBytes / sizeof(double)> d;
  const size_t pairs = p.rotary_dim / 2;
  const hn::Half<decltype(d)> d2;
  const hn::Half<decltype(d2)> d4;
  if constexpr (hn::MaxLanes(d2) >= 2) {
    if (pairs < hn::Lanes(d) && pairs >= hn::Lanes(d2) && hn::Lanes(d2) >= 2) {
      return RopeRowsOn<kToNearest>(d2, p, x, seq_len, first_position);
    }
  }
  if constexpr (hn::MaxLanes(d4) >= 2) {
    if (pairs < hn::Lanes(d2) && pairs >= hn::Lanes(d4) && hn::Lanes(d4) >= 2) {
      return RopeRowsOn<kToNearest>(d4, p, x, seq_len, first_position);
    }
  }
  RopeRowsOn<kToNearest>(d, p, x, seq_len, first_position);
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

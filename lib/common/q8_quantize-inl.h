// SPDX-License-Identifier: Apache-2.0
// The Q8 rule (lib/common/q8.h) on Highway vectors, for linear_q8's activations and the KV cache's rows: the same
// bits as the scalar Q8QuantizeGroup, since every step is exact or one IEEE operation of the scalar code: the max of
// |x| (exact), the division x / scale (correctly rounded in the caller's mode, as the scalar division), and the
// rounding to an integer, always to nearest even: one instruction where the ISA takes the rounding direction from the
// instruction itself (x86 SSE4.1 roundps / AVX-512 vrndscaleps with an immediate, AArch64 frintn: the caller's
// mode does not apply), elsewhere truncation, an exact difference and a comparison with 1/2 (RoundToNearestEven's
// steps). ARMv7 NEON has no IEEE division and flushes subnormals: there, and for groups narrower than 4 lanes (or
// than the vectors of the tag a caller passes), the scalar code runs.

#if defined(EDGEATTN_LIB_COMMON_Q8_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_Q8_QUANTIZE_INL_H_
#undef EDGEATTN_LIB_COMMON_Q8_QUANTIZE_INL_H_
#else
#define EDGEATTN_LIB_COMMON_Q8_QUANTIZE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/common/q8.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// r (|r| <= 127) rounded to the nearest integer, ties to even, in any rounding mode of the caller.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> RoundHalfEvenToInt(D d, hn::Vec<D> r) {
  const hn::RebindToSigned<D> di;
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4) || HWY_ARCH_ARM_A64
  (void)d;
  return hn::ConvertTo(di, hn::Round(r));  // an integral value: the conversion is exact
#else
  const auto one = hn::Set(di, 1), zero = hn::Zero(di);
  const auto half = hn::Set(d, 0.5f);
  const auto t = hn::ConvertTo(di, r);  // truncation: |r| <= 127
  const auto frac = hn::Abs(hn::Sub(r, hn::ConvertTo(d, t)));
  const auto odd = hn::RebindMask(d, hn::Ne(hn::And(t, one), zero));
  const auto away = hn::Or(hn::Gt(frac, half), hn::And(hn::Eq(frac, half), odd));
  const auto step = hn::IfThenElseZero(hn::RebindMask(di, away),
                                       hn::IfThenElse(hn::RebindMask(di, hn::Lt(r, hn::Zero(d))), hn::Neg(one), one));
  return hn::Add(t, step);
#endif
}

// One group of n finite floats on vectors of tag d: q[i] and the scale as Q8QuantizeGroup, and *sum = sum of q
// (sum may be null).
template <class D>
HWY_INLINE float Q8QuantizeGroupIn(D d, const float* HWY_RESTRICT x, size_t n, int8_t* HWY_RESTRICT q, int32_t* sum) {
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<int8_t, decltype(d)> d8;
  const size_t N = hn::Lanes(d);
  if (HWY_ARCH_ARM_V7 || n < N) {
    const float scale = internal::Q8QuantizeGroup(x, n, q);
    int32_t s = 0;
    for (size_t i = 0; i < n; ++i) s += q[i];
    if (sum != nullptr) *sum = s;
    return scale;
  }
  auto max_abs = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) max_abs = hn::Max(max_abs, hn::Abs(hn::LoadU(d, x + i)));
  float m = hn::GetLane(hn::MaxOfLanes(d, max_abs));
  for (; i < n; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    m = a > m ? a : m;
  }
  const float scale = m / 127.0f;
  if (scale == 0.0f) {
    for (i = 0; i < n; ++i) q[i] = 0;
    if (sum != nullptr) *sum = 0;
    return scale;
  }
  const auto vscale = hn::Set(d, scale), limit = hn::Set(d, 127.0f);
  auto sums = hn::Zero(di);
  for (i = 0; i + N <= n; i += N) {
    const auto r = hn::Min(hn::Max(hn::Div(hn::LoadU(d, x + i), vscale), hn::Neg(limit)), limit);
    const auto qi = RoundHalfEvenToInt(d, r);
    if (sum != nullptr) sums = hn::Add(sums, qi);
    hn::StoreU(hn::DemoteTo(d8, qi), d8, q + i);
  }
  int32_t s = sum != nullptr ? hn::GetLane(hn::SumOfLanes(di, sums)) : 0;
  for (; i < n; ++i) {
    q[i] = internal::Q8Quantize(x[i], scale);
    s += q[i];
  }
  if (sum != nullptr) *sum = s;
  return scale;
}

// The same on the widest vectors the group fills: the target's full vectors, else 8 lanes, else 4 (the scalar code
// below 4). Narrow groups (the KV cache's rows of 8, linear_q8's groups of 4 or 8) then avoid the scalar rule's
// per-value dependency chain.
HWY_INLINE float Q8QuantizeGroupSimd(const float* HWY_RESTRICT x, size_t n, int8_t* HWY_RESTRICT q, int32_t* sum) {
  const hn::ScalableTag<float> d;
  if (n >= hn::Lanes(d)) return Q8QuantizeGroupIn(d, x, n, q, sum);
  if (n >= 8) return Q8QuantizeGroupIn(hn::CappedTag<float, 8>(), x, n, q, sum);
  return Q8QuantizeGroupIn(hn::CappedTag<float, 4>(), x, n, q, sum);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2  // callers test the same condition
// `groups` consecutive groups of 4 finite floats (linear_q8's activations with group_size 4), a vector's worth
// (4 groups on AVX-512, 2 on AVX2) at a time: each group in one 128-bit block, its max |x| spread to the block by
// two in-block shuffles (exact), then Q8QuantizeGroupIn's steps lane by lane (the scale m / 127, the division, the
// clamp, the rounding), so the same bits. q[4g + i], scale[g], offset[g] = -128 * the sum of group g's q. A group
// whose scale is 0 divides by 1 instead: its values are then below 127 * 2^-149 in magnitude and round to 0, as
// the scalar rule's zeros. The groups left over take Q8QuantizeGroupSimd.
HWY_INLINE void Q8QuantizeGroupsOf4(const float* HWY_RESTRICT x, size_t groups, int8_t* HWY_RESTRICT q,
                                    float* HWY_RESTRICT scale, int32_t* HWY_RESTRICT offset) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<int8_t, decltype(d)> d8;
  const size_t N = hn::Lanes(d), per = N / 4;
  const auto limit = hn::Set(d, 127.0f), one = hn::Set(d, 1.0f);
  HWY_ALIGN float scales[hn::MaxLanes(decltype(d)())];
  HWY_ALIGN int32_t sums[hn::MaxLanes(decltype(d)())];
  size_t g = 0;
  for (; g + per <= groups; g += per) {
    const auto v = hn::LoadU(d, x + 4 * g);
    auto m = hn::Abs(v);
    m = hn::Max(m, hn::Shuffle2301(m));
    m = hn::Max(m, hn::Shuffle1032(m));
    const auto vscale = hn::Div(m, limit);
    const auto divisor = hn::IfThenElse(hn::Eq(vscale, hn::Zero(d)), one, vscale);
    const auto qi = RoundHalfEvenToInt(d, hn::Min(hn::Max(hn::Div(v, divisor), hn::Neg(limit)), limit));
    hn::StoreU(hn::DemoteTo(d8, qi), d8, q + 4 * g);
    auto t = hn::Add(qi, hn::Shuffle2301(qi));
    t = hn::Add(t, hn::Shuffle1032(t));
    hn::Store(vscale, d, scales);
    hn::Store(t, di, sums);
    for (size_t k = 0; k < per; ++k) scale[g + k] = scales[4 * k], offset[g + k] = -128 * sums[4 * k];
  }
  for (; g < groups; ++g) {
    int32_t sum;
    scale[g] = Q8QuantizeGroupSimd(x + 4 * g, 4, q + 4 * g, &sum);
    offset[g] = -128 * sum;
  }
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

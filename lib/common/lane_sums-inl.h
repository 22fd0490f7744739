// SPDX-License-Identifier: Apache-2.0
// The lane sums of several AVX-512 vectors at once, each with the bits of Highway's SumOfLanes.
//
// Highway 1.0.3's SumOfLanes on a 16-lane float vector is _mm512_reduce_add_ps, which adds in four levels: the
// upper 8 lanes to the lower 8, then the upper 4 of those to the lower 4, then lanes 2 and 3 to lanes 0 and 1,
// then lane 1 to lane 0. Each level's additions take the same operands here, so the sums are bit for bit the same.
// But here one shuffle serves two vectors at the first level, four at the second and all of them at the third and
// fourth. SumOfLanes alone costs about eight operations per vector, plus a store when the sums go to memory one by
// one. Four vectors cost 14 operations here and eight cost 24, and their sums come out in one vector.

#if defined(EDGEATTN_LIB_COMMON_LANE_SUMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_LANE_SUMS_INL_H_
#undef EDGEATTN_LIB_COMMON_LANE_SUMS_INL_H_
#else
#define EDGEATTN_LIB_COMMON_LANE_SUMS_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Callers test the same condition.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

namespace lane_sums {

// The first level for two vectors: blocks 0-1 of the result hold a's upper 8 lanes plus its lower 8, blocks 2-3
// hold b's.
HWY_INLINE __m512 FoldEights(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)),
                       _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)));
}

// The second level for the four vectors behind ab and cd (FoldEights' results): block j holds vector j's upper 4
// lanes plus its lower 4.
HWY_INLINE __m512 FoldFours(__m512 ab, __m512 cd) {
  return _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)),
                       _mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)));
}

}  // namespace lane_sums

// Lane k: the sum of v_k's lanes, SumOfLanes' bits.
HWY_INLINE hn::Vec128<float> LaneSums4(hn::Vec512<float> v0, hn::Vec512<float> v1, hn::Vec512<float> v2,
                                       hn::Vec512<float> v3) {
  using lane_sums::FoldEights;
  using lane_sums::FoldFours;
  const __m512 t4 = FoldFours(FoldEights(v0.raw, v1.raw), FoldEights(v2.raw, v3.raw));
  const __m512 t2 = _mm512_add_ps(t4, _mm512_permute_ps(t4, _MM_SHUFFLE(1, 0, 3, 2)));  // lanes 0, 1: + lanes 2, 3
  const __m512 t1 = _mm512_add_ps(t2, _mm512_permute_ps(t2, _MM_SHUFFLE(0, 0, 0, 1)));  // lane 0: + lane 1
  const __m512i lanes = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
  return hn::Vec128<float>{_mm512_castps512_ps128(_mm512_permutexvar_ps(lanes, t1))};
}

// Lane k: the sum of v[k]'s lanes, SumOfLanes' bits.
HWY_INLINE hn::Vec256<float> LaneSums8(const hn::Vec512<float> v[8]) {
  using lane_sums::FoldEights;
  using lane_sums::FoldFours;
  const __m512 lo4 = FoldFours(FoldEights(v[0].raw, v[1].raw), FoldEights(v[2].raw, v[3].raw));  // vectors 0-3
  const __m512 hi4 = FoldFours(FoldEights(v[4].raw, v[5].raw), FoldEights(v[6].raw, v[7].raw));  // vectors 4-7
  // Block j: lanes 0, 1 of vector j's and of vector j + 4's fold, each plus its lanes 2, 3.
  const __m512 t2 = _mm512_add_ps(_mm512_shuffle_ps(lo4, hi4, _MM_SHUFFLE(1, 0, 1, 0)),
                                  _mm512_shuffle_ps(lo4, hi4, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 t1 = _mm512_add_ps(t2, _mm512_permute_ps(t2, _MM_SHUFFLE(2, 3, 0, 1)));  // lanes 0, 2: + 1, 3
  const __m512i lanes = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 14, 10, 6, 2, 12, 8, 4, 0);
  return hn::Vec256<float>{_mm512_castps512_ps256(_mm512_permutexvar_ps(lanes, t1))};
}

#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

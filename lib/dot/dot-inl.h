// SPDX-License-Identifier: Apache-2.0
// Dot product on Highway vectors.

#if defined(EDGEATTN_LIB_DOT_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_DOT_DOT_INL_H_
#undef EDGEATTN_LIB_DOT_DOT_INL_H_
#else
#define EDGEATTN_LIB_DOT_DOT_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/dot/dot_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// sum a[i]*b[i]. Four accumulators: an FMA has a latency of 4 cycles and two issue per cycle on current cores,
// and the compiler will not split one float accumulator into several (that would change the rounding).
template <class D>
HWY_INLINE float Dot(D d, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t n) {
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), s0);
    s1 = hn::MulAdd(hn::LoadU(d, a + i + N), hn::LoadU(d, b + i + N), s1);
    s2 = hn::MulAdd(hn::LoadU(d, a + i + 2 * N), hn::LoadU(d, b + i + 2 * N), s2);
    s3 = hn::MulAdd(hn::LoadU(d, a + i + 3 * N), hn::LoadU(d, b + i + 3 * N), s3);
  }
  for (; i + N <= n; i += N) s0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), s0);
  if (i < n) s1 = hn::MulAdd(LoadTail(d, a + i, n - i), LoadTail(d, b + i, n - i), s1);  // zero padding adds 0
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
}

inline void DotArrays(const float* a, const float* b, size_t n, float* result) {
#if HWY_TARGET == HWY_SCALAR  // one lane: the scalar path's loop (docs/performance.md, "One lane")
  *result = internal::DotScalar(a, b, n);
#else
  *result = Dot(hn::ScalableTag<float>(), a, b, n);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

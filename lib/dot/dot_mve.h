// SPDX-License-Identifier: Apache-2.0
// Dot product on Helium (MVE): the algorithm of dot-inl.h with 4-lane vectors. Contract: dot.h, with the
// flush-to-zero form of the underflow term (n * 2^-126; subnormal inputs read as 0), since MVE flushes
// (lib/common/mve.h). Tails are predicated loads: nothing past a[n - 1] or b[n - 1] is read.
#ifndef EDGEATTN_LIB_DOT_DOT_MVE_H_
#define EDGEATTN_LIB_DOT_DOT_MVE_H_

#include "lib/common/mve.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// sum a[i] * b[i] in 16 partial sums (4 accumulators x 4 lanes; element i goes to accumulator (i / 4) % 4, lane
// i % 4 in the main loop): a VFMA has a latency of 2 and issues every 2 beats on the M55, and four independent
// chains keep the pipe busy while one waits on its load.
// The loops advance the pointers themselves: GCC 12 then folds the increments into post-indexed loads (15
// instructions per 16 elements, against 18 with an index).
inline float DotMve(const float* a, const float* b, size_t n) {
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
  for (const float* const end = a + n / (4 * kLanes) * (4 * kLanes); a != end; a += 4 * kLanes, b += 4 * kLanes) {
    s0 = vfmaq_f32(s0, vldrwq_f32(a), vldrwq_f32(b));
    s1 = vfmaq_f32(s1, vldrwq_f32(a + 4), vldrwq_f32(b + 4));
    s2 = vfmaq_f32(s2, vldrwq_f32(a + 8), vldrwq_f32(b + 8));
    s3 = vfmaq_f32(s3, vldrwq_f32(a + 12), vldrwq_f32(b + 12));
  }
  size_t rest = n % (4 * kLanes);
  for (; rest >= kLanes; rest -= kLanes, a += kLanes, b += kLanes) s0 = vfmaq_f32(s0, vldrwq_f32(a), vldrwq_f32(b));
  if (rest != 0) s1 = vfmaq_f32(s1, LoadTail(a, rest), LoadTail(b, rest));  // zero lanes add +0
  return SumLanes(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
}

inline void DotArraysMve(const float* a, const float* b, size_t n, float* result) { *result = DotMve(a, b, n); }

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_DOT_DOT_MVE_H_

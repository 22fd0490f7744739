// SPDX-License-Identifier: Apache-2.0
// Exact int8 dot product on Helium (MVE integer), for Q8 groups (int8 weights times int8 activations, issue 30's
// ACT_Q8): VMLADAVA.S8 multiplies 16 byte pairs and adds all 16 products to a 32-bit scalar accumulator in one
// instruction. Exact for any n with |sum| < 2^31 (n <= 2^17 when the values are in [-128, 127]); the tail is one
// predicated load and multiply-add (VCTP.8), so nothing past a[n - 1] or b[n - 1] is read.
#ifndef EDGEATTN_LIB_COMMON_Q8_DOT_MVE_H_
#define EDGEATTN_LIB_COMMON_Q8_DOT_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/arch.h"

#define EDGEATTN_MVE_INT EDGEATTN_HAS_MVE_INT
#if EDGEATTN_MVE_INT
#include <arm_mve.h>
#endif

#if EDGEATTN_MVE_INT
namespace edgeattn {
namespace mve {

// sum a[i] * b[i] exactly. Two accumulators: VMLADAVA's scalar accumulator is its only dependency chain.
inline int32_t DotS8Mve(const int8_t* a, const int8_t* b, size_t n) {
  int32_t s0 = 0, s1 = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = vmladavaq_s8(s0, vldrbq_s8(a + i), vldrbq_s8(b + i));
    s1 = vmladavaq_s8(s1, vldrbq_s8(a + i + 16), vldrbq_s8(b + i + 16));
  }
  for (; i + 16 <= n; i += 16) s0 = vmladavaq_s8(s0, vldrbq_s8(a + i), vldrbq_s8(b + i));
  if (i < n) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    s1 = vmladavaq_p_s8(s1, vldrbq_z_s8(a + i, p), vldrbq_z_s8(b + i, p), p);
  }
  return s0 + s1;
}

// Lane k = sum a[i] * b_k[i] for four rows b_k at once, each 16-byte load of a shared by four VMLADAVAs (a linear_q8
// group against four outputs' weights). Exact as DotS8Mve; the tail is predicated.
inline int32x4_t DotS8Mve4(const int8_t* a, const int8_t* const b[4], size_t n) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const int8x16_t av = vldrbq_s8(a + i);
    s0 = vmladavaq_s8(s0, av, vldrbq_s8(b[0] + i));
    s1 = vmladavaq_s8(s1, av, vldrbq_s8(b[1] + i));
    s2 = vmladavaq_s8(s2, av, vldrbq_s8(b[2] + i));
    s3 = vmladavaq_s8(s3, av, vldrbq_s8(b[3] + i));
  }
  if (i < n) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    const int8x16_t av = vldrbq_z_s8(a + i, p);
    s0 = vmladavaq_p_s8(s0, av, vldrbq_z_s8(b[0] + i, p), p);
    s1 = vmladavaq_p_s8(s1, av, vldrbq_z_s8(b[1] + i, p), p);
    s2 = vmladavaq_p_s8(s2, av, vldrbq_z_s8(b[2] + i, p), p);
    s3 = vmladavaq_p_s8(s3, av, vldrbq_z_s8(b[3] + i, p), p);
  }
  return vsetq_lane_s32(s3, vsetq_lane_s32(s2, vsetq_lane_s32(s1, vdupq_n_s32(s0), 1), 2), 3);
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_INT

#endif  // EDGEATTN_LIB_COMMON_Q8_DOT_MVE_H_

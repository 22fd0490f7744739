// SPDX-License-Identifier: Apache-2.0
// Helium (MVE, Armv8.1-M: Cortex-M55, M85) building blocks for the hand-written kernels in lib/*/*_mve.h: the
// build test, tails, lane reductions and a division (MVE has no vector divide).
//
// Facts about the unit that the kernels' contracts rest on (checked on QEMU 7.2's mps3-an547 by
// tests/mve_test.cc, MveUnitTest): MVE floating-point instructions ignore the FPSCR and use Arm's "standard
// FPSCR value": they always round to nearest, flush subnormal inputs and results to zero (sign kept) and return
// the default NaN. So a kernel's vector arithmetic rounds to nearest whatever mode the caller has set (only its
// scalar steps, on the FPU, follow the caller's mode), and every bound's gradual-underflow term takes the
// flush-to-zero form the headers give (2^-126 instead of 2^-149; subnormal inputs read as zero).
// VMAXNM/VMINNM return the number when one operand is NaN; kernels that must propagate NaN test for it.
// VCMP.F32 follows Arm's condition codes: LT and LE are also true for unordered operands (a NaN lane), GT, GE and
// EQ are false, NE true. GCC 12 emits the condition each intrinsic names; clang-14 treats the intrinsics as IEEE
// comparisons and lowers some of them to LT or LE against a scalar or zero operand (x < 0 as "vcmp lt", x != x
// as "vpt ge; vcmpt lt"), which are wrong for NaN lanes. So no kernel decides anything about a NaN lane with a
// float comparison: NaN lanes are found by IsNan (an integer comparison, the same on both compilers) and signs
// by the sign bit, and every float comparison is one whose answer for a NaN lane is overridden afterwards.
#ifndef EDGEATTN_LIB_COMMON_MVE_H_
#define EDGEATTN_LIB_COMMON_MVE_H_

#include "lib/common/arch.h"

// 1 where the compiler generates MVE floating point (lib/common/arch.h), else 0.
#define EDGEATTN_MVE_FLOAT EDGEATTN_HAS_MVE_FLOAT

#if EDGEATTN_MVE_FLOAT
#include <arm_mve.h>
#include <stddef.h>
#include <stdint.h>

namespace edgeattn {
namespace mve {

constexpr size_t kLanes = 4;  // float lanes of a 128-bit Q register

// The first `rest` (< 4) lanes; the others read as +0 and are never touched in memory (a predicated load does
// not access the inactive lanes' addresses), so no tail reads past an array's end.
inline mve_pred16_t FirstLanes(size_t rest) { return vctp32q(static_cast<uint32_t>(rest)); }
inline float32x4_t LoadTail(const float* p, size_t rest) { return vldrwq_z_f32(p, FirstLanes(rest)); }
inline void StoreTail(float* p, float32x4_t v, size_t rest) { vstrwq_p_f32(p, v, FirstLanes(rest)); }
// `lanes` (1 .. 4) floats: a whole vector, or a predicated tail.
inline float32x4_t LoadLanes(const float* p, size_t lanes) {
  return lanes == kLanes ? vldrwq_f32(p) : LoadTail(p, lanes);
}
inline void StoreLanes(float* p, float32x4_t v, size_t lanes) {
  if (lanes == kLanes) {
    vstrwq_f32(p, v);
  } else {
    StoreTail(p, v, lanes);
  }
}

// Sum of the four lanes as (l0 + l1) + (l2 + l3) on the scalar FPU (MVE has no across-vector float add).
inline float SumLanes(float32x4_t v) {
  return (vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 1)) + (vgetq_lane_f32(v, 2) + vgetq_lane_f32(v, 3));
}

inline int32x4_t AsInt(float32x4_t v) { return vreinterpretq_s32_f32(v); }
inline float32x4_t AsFloat(int32x4_t v) { return vreinterpretq_f32_s32(v); }

// NaN lanes: |bits| above infinity's, compared as integers.
inline mve_pred16_t IsNan(float32x4_t v) {
  return vcmpgtq_s32(vandq_s32(AsInt(v), vdupq_n_s32(0x7FFFFFFF)), vdupq_n_s32(0x7F800000));
}

// Lanes whose sign bit is set (-0 and -NaN included).
inline mve_pred16_t SignBitSet(float32x4_t v) { return vcmpltq_s32(AsInt(v), vdupq_n_s32(0)); }

// num / den for den in [2^-100, 2^100] and a quotient that is a normal float: an integer estimate of 1/den
// (relative error below 0.051 over every significand), three Newton steps (each squares it: below 2^-34), then one
// correction of the quotient with the exact residual q*den - num (one FMA). Within 1 ULP of the correctly rounded
// quotient where |num| >= 2^-100; below that the residual is subnormal and flushes, and the uncorrected num * (1/den)
// is within 1.5 ULP. An overflowing quotient or an infinite num gives NaN: callers select those lanes themselves.
// MVE has no divide or reciprocal-estimate instruction; ten vector operations replace four scalar divides and the
// lane moves around them.
inline float32x4_t Divide(float32x4_t num, float32x4_t den) {
  const float32x4_t neg_den = vnegq_f32(den);
  float32x4_t r = AsFloat(vsubq_s32(vdupq_n_s32(0x7EF311C3), AsInt(den)));
  r = vfmaq_f32(r, r, vfmasq_n_f32(neg_den, r, 1.0f));  // r + r (1 - den r)
  r = vfmaq_f32(r, r, vfmasq_n_f32(neg_den, r, 1.0f));
  r = vfmaq_f32(r, r, vfmasq_n_f32(neg_den, r, 1.0f));
  const float32x4_t q = vmulq_f32(num, r);
  // q - (q den - num) r rather than q + (num - q den) r: the same value, but for num = -0 the residual is
  // -0 + 0 = +0 and q - (+0) stays -0 where q + (+0) would not.
  return vfmsq_f32(q, vfmaq_f32(vnegq_f32(num), q, den), r);
}

}  // namespace mve
}  // namespace edgeattn

#endif  // EDGEATTN_MVE_FLOAT
#endif  // EDGEATTN_LIB_COMMON_MVE_H_

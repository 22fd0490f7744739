// SPDX-License-Identifier: Apache-2.0
// linear_q8 on Helium (MVE), both activation modes. Contract: linear_q8.h.
//  - ACT_Q8: four outputs per pass, each group's four int8 dots by VMLADAVA.S8 (16 byte products per instruction)
//    with x's group loaded once. The sums are exact and the quantisation and the float steps stay on the scalar FPU
//    in the contract's order (MVE float would round to nearest under a directed mode, and flush), so the bits are
//    the scalar path's.
//  - ACT_F32: four outputs per pass over x's row; per group one VFMA chain per output over the int8 values widened
//    by VLDRB.S32 and converted exactly by VCVT, then acc += chain * scale per lane (VFMA). Rounding depth per output
//    below group_size / 4 + groups + 3, inside gamma(in_features + groups + 2); MVE flushes, so the underflow term
//    is the flush-to-zero form. Group tails are predicated: nothing past x's row or q's row is read.
#ifndef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_MVE_H_
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/mve.h"
#include "lib/common/q8_dot_mve.h"
#include "lib/linear_q8/linear_q8_scalar.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// The weight rows and scale rows of outputs o .. o + count - 1 (count <= 4; the missing ones repeat the last row, so
// a block of fewer outputs runs the same code and stores only its own).
struct Q8Rows4 {
  const int8_t* q[4];
  const float* scale[4];
};
inline Q8Rows4 RowsOf4(const internal::LinearQ8Problem& p, size_t o, size_t count) {
  const size_t in = p.w.in_features, groups = in / p.w.group_size;
  Q8Rows4 rows;
  for (size_t k = 0; k < 4; ++k) {
    const size_t row = o + (k < count ? k : count - 1);
    rows.q[k] = p.w.q + row * in;
    rows.scale[k] = p.w.scale + row * groups;
  }
  return rows;
}

// Outputs o .. o + count - 1 of row r: per group the four exact
// sums (DotS8Mve4: x's group loaded once), then each output's float steps in the scalar loop's order.
inline void LinearQ8Block(const internal::LinearQ8Problem& p, const internal::Q8Workspace& ws, size_t r, size_t o,
                          size_t count) {
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  Q8Rows4 rows = RowsOf4(p, o, count);
  const int8_t* qx = ws.qx + r * in;
  const float* sx = ws.sx + r * groups;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (size_t g = 0; g < groups; ++g) {
    int32_t s[4];
    DotS8Mve4(qx, rows.q, gs, s);
    for (size_t k = 0; k < 4; ++k) acc[k] = internal::Q8FinishStep(acc[k], s[k], rows.scale[k][g], sx[g]);
    qx += gs;
    for (size_t k = 0; k < 4; ++k) rows.q[k] += gs;
  }
  float* y = p.y + r * p.w.out_features + o;
  for (size_t k = 0; k < count; ++k) y[k] = p.bias != nullptr ? acc[k] + p.bias[o + k] : acc[k];
}

inline void LinearQ8Mve(const internal::LinearQ8Problem& p) {
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  const internal::Q8Workspace ws = internal::CarveQ8Workspace(p.workspace, p.rows, groups, gs);
  for (size_t r = 0; r < p.rows; ++r) {
    internal::Q8QuantizeRowScalar(p.x + r * in, in, gs, ws.qx + r * in, ws.sx + r * groups);
  }
  for (size_t r = 0; r < p.rows; ++r) {
    for (size_t o = p.o_begin; o < p.o_end; o += 4) LinearQ8Block(p, ws, r, o, p.o_end - o < 4 ? p.o_end - o : 4);
  }
}

// acc[k] += x[i .. i + lanes) * q_k[i .. i + lanes) for the four outputs; lanes < 4 is a predicated tail whose
// inactive lanes are +0 in both operands (and add +0).
inline void Q8F32Step(const float* x, const int8_t* const q[4], size_t i, size_t lanes, float32x4_t acc[4]) {
  if (lanes == kLanes) {
    const float32x4_t xv = vldrwq_f32(x + i);
    for (size_t k = 0; k < 4; ++k) acc[k] = vfmaq_f32(acc[k], xv, vcvtq_f32_s32(vldrbq_s32(q[k] + i)));
  } else {
    const mve_pred16_t pred = FirstLanes(lanes);
    const float32x4_t xv = vldrwq_z_f32(x + i, pred);
    for (size_t k = 0; k < 4; ++k) acc[k] = vfmaq_f32(acc[k], xv, vcvtq_f32_s32(vldrbq_z_s32(q[k] + i, pred)));
  }
}

// Outputs o .. o + count - 1 (RowsOf4) of one row of x.
inline void LinearQ8F32Block(const float* x, const internal::LinearQ8Problem& p, size_t o, size_t count,
                             float sums[4]) {
  const size_t gs = p.w.group_size, groups = p.w.in_features / gs;
  const Q8Rows4 rows = RowsOf4(p, o, count);
  float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  for (size_t g = 0; g < groups; ++g) {
    float32x4_t group[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    const size_t end = (g + 1) * gs;
    size_t i = g * gs;
    for (; i + kLanes <= end; i += kLanes) Q8F32Step(x, rows.q, i, kLanes, group);
    if (i < end) Q8F32Step(x, rows.q, i, end - i, group);
    for (size_t k = 0; k < 4; ++k) acc[k] = vfmaq_n_f32(acc[k], group[k], rows.scale[k][g]);
  }
  for (size_t k = 0; k < 4; ++k) sums[k] = SumLanes(acc[k]);
}

inline void LinearQ8F32Mve(const internal::LinearQ8Problem& p) {
  const size_t in = p.w.in_features, out = p.w.out_features;
  for (size_t r = 0; r < p.rows; ++r) {
    for (size_t o = p.o_begin; o < p.o_end; o += 4) {
      const size_t count = p.o_end - o < 4 ? p.o_end - o : 4;
      float sums[4];
      LinearQ8F32Block(p.x + r * in, p, o, count, sums);
      for (size_t k = 0; k < count; ++k) p.y[r * out + o + k] = p.bias != nullptr ? sums[k] + p.bias[o + k] : sums[k];
    }
  }
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_MVE_H_

// SPDX-License-Identifier: Apache-2.0
// linear_q8 on Helium (MVE), both activation modes. Contract: linear_q8.h.
//  - ACT_Q8: four outputs per pass, each group's four int8 dots by VMLADAVA.S8 (16 byte products per instruction)
//    with x's group loaded once. The sums are exact; the quantisation stays on the scalar FPU, and the float steps
//    run in the contract's order, as one MVE vector for the four outputs where that provably gives the scalar FPU's
//    bits (round to nearest, no operand or result that MVE would flush: LinearQ8BlockVectorFinish), else on the
//    scalar FPU. Either way the bits are the scalar path's.
//  - ACT_F32: four outputs per pass over x's row; per group one VFMA chain per output over the int8 values widened
//    by VLDRB.S32 and converted exactly by VCVT, then acc += chain * scale per lane (VFMA). Rounding depth per output
//    below group_size / 4 + groups + 3, inside gamma(in_features + groups + 2); MVE flushes, so the underflow term
//    is the flush-to-zero form. Group tails are predicated: nothing past x's row or q's row is read.
#ifndef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_MVE_H_
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/bit_cast.h"
#include "lib/common/fp_env.h"
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

// Outputs o .. o + count - 1 of row r: per group the four exact sums (DotS8Mve4: x's group loaded once), then each
// output's float steps in the scalar loop's order on the scalar FPU (any rounding mode, no flushing).
inline void LinearQ8Block(const internal::LinearQ8Problem& p, const internal::Q8Workspace& ws, size_t r, size_t o,
                          size_t count) {
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  Q8Rows4 rows = RowsOf4(p, o, count);
  const int8_t* qx = ws.qx + r * in;
  const float* sx = ws.sx + r * groups;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (size_t g = 0; g < groups; ++g) {
    const int32x4_t s = DotS8Mve4(qx, rows.q, gs);
    acc[0] = internal::Q8FinishStep(acc[0], vgetq_lane_s32(s, 0), rows.scale[0][g], sx[g]);
    acc[1] = internal::Q8FinishStep(acc[1], vgetq_lane_s32(s, 1), rows.scale[1][g], sx[g]);
    acc[2] = internal::Q8FinishStep(acc[2], vgetq_lane_s32(s, 2), rows.scale[2][g], sx[g]);
    acc[3] = internal::Q8FinishStep(acc[3], vgetq_lane_s32(s, 3), rows.scale[3][g], sx[g]);
    qx += gs;
    for (size_t k = 0; k < 4; ++k) rows.q[k] += gs;
  }
  float* y = p.y + r * p.w.out_features + o;
  for (size_t k = 0; k < count; ++k) y[k] = p.bias != nullptr ? acc[k] + p.bias[o + k] : acc[k];
}

// The vector finish's range test on a scale's bits: (|bits| << 1) - 2, unsigned, is at least kQ8VectorFinishLow
// exactly when the scale is +-0 or at least 2^-51 in magnitude (biased exponent 76); infinities and NaNs pass here
// and are caught in the result.
constexpr uint32_t kQ8VectorFinishLow = (76u << 24) - 2u;
inline bool Q8VectorFinishRow(const float* sx, size_t groups) {
  uint32_t low = 0xFFFFFFFFu;
  for (size_t g = 0; g < groups; ++g) {
    const uint32_t v = (internal::BitCastScalar<uint32_t>(sx[g]) << 1) - 2u;
    low = v < low ? v : low;
  }
  return low >= kQ8VectorFinishLow;
}

// LinearQ8Block with the four outputs' float steps as one MVE vector per group: convert, multiply by the four
// weight scales (one gather), multiply by x's scale, add; the scalar steps' operations in their order, each rounded
// once. MVE float rounds to nearest and flushes subnormal inputs and results, so these are the scalar path's bits
// only when the caller rounds to nearest (tested per call) and nothing on the way is subnormal: the sums are
// integers, x's scales (Q8VectorFinishRow, per row) and the weight scales (here, per group) are 0 or at least
// 2^-51, so every product is 0 or at least 2^-102 in magnitude, a multiple of 2^-125, and so is every sum of such
// (exact sums of multiples of 2^-125, and their roundings, stay on that grid): nothing comes below 2^-125, before
// rounding or after. A NaN or infinite accumulator (the scalar FPU keeps a NaN's payload, MVE returns the default
// NaN) is caught at the end. Writes nothing and returns false when a test fails.
// kGroupSize: the group size when it is known at compile time (the group dots unrolled), else 0.
template <size_t kGroupSize>
inline bool LinearQ8BlockVectorFinish(const internal::LinearQ8Problem& p, const internal::Q8Workspace& ws, size_t r,
                                      size_t o, size_t count) {
  const size_t in = p.w.in_features, gs = kGroupSize != 0 ? kGroupSize : p.w.group_size, groups = in / gs;
  Q8Rows4 rows = RowsOf4(p, o, count);
  const uint32_t offsets[4] = {0, static_cast<uint32_t>(rows.scale[1] - rows.scale[0]),
                               static_cast<uint32_t>(rows.scale[2] - rows.scale[0]),
                               static_cast<uint32_t>(rows.scale[3] - rows.scale[0])};
  const uint32x4_t scale_offsets = vldrwq_u32(offsets);
  const int8_t* qx = ws.qx + r * in;
  const float* sx = ws.sx + r * groups;
  float32x4_t acc = vdupq_n_f32(0.0f);
  uint32x4_t low = vdupq_n_u32(0xFFFFFFFFu);
  for (size_t g = 0; g < groups; ++g) {
    const float32x4_t scale = vldrwq_gather_shifted_offset_f32(rows.scale[0] + g, scale_offsets);
    low = vminq_u32(low, vsubq_n_u32(vshlq_n_u32(vreinterpretq_u32_f32(scale), 1), 2u));
    const float32x4_t product = vmulq_f32(vcvtq_f32_s32(DotS8Mve4(qx, rows.q, gs)), scale);
    acc = vaddq_f32(acc, vmulq_n_f32(product, sx[g]));
    qx += gs;
    for (size_t k = 0; k < 4; ++k) rows.q[k] += gs;
  }
  // An exponent field of all ones (infinity or NaN) makes (bits << 1) at least 0xFF000000.
  const bool finite = vmaxvq_u32(0u, vshlq_n_u32(vreinterpretq_u32_f32(acc), 1)) < 0xFF000000u;
  if (vminvq_u32(0xFFFFFFFFu, low) < kQ8VectorFinishLow || !finite) return false;
  float sums[4];
  vstrwq_f32(sums, acc);
  float* y = p.y + r * p.w.out_features + o;
  for (size_t k = 0; k < count; ++k) y[k] = p.bias != nullptr ? sums[k] + p.bias[o + k] : sums[k];
  return true;
}

// Per row the vector finish where the row's x scales allow it and the caller rounds to nearest, per block of four
// outputs the scalar steps where the weight scales or the result do not (LinearQ8BlockVectorFinish).
inline void LinearQ8Mve(const internal::LinearQ8Problem& p) {
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  const internal::Q8Workspace ws = internal::CarveQ8Workspace(p.workspace, p.rows, groups, gs);
  for (size_t r = 0; r < p.rows; ++r) {
    internal::Q8QuantizeRowScalar(p.x + r * in, in, gs, ws.qx + r * in, ws.sx + r * groups);
  }
  const bool nearest = internal::RoundsToNearest();
  for (size_t r = 0; r < p.rows; ++r) {
    const bool vector_finish = nearest && Q8VectorFinishRow(ws.sx + r * groups, groups);
    for (size_t o = p.o_begin; o < p.o_end; o += 4) {
      const size_t count = p.o_end - o < 4 ? p.o_end - o : 4;
      // Groups of 32: llama2.c's runq.c (64, halved until it divides dim) on small models.
      const bool done = vector_finish && (gs == 32 ? LinearQ8BlockVectorFinish<32>(p, ws, r, o, count)
                                                   : LinearQ8BlockVectorFinish<0>(p, ws, r, o, count));
      if (!done) LinearQ8Block(p, ws, r, o, count);
    }
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

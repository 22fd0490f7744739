// SPDX-License-Identifier: Apache-2.0
// RoPE from a table (RopeWithTable) on Helium (MVE). Contract: rope.h's table variant, with the flush-to-zero
// underflow term 3 * 2^-126 (and subnormal inputs read as 0) in place of 3 * 2^-150, since MVE flushes
// (lib/common/mve.h). Each output is one product and one fused multiply-add (x_a c - x_b s rounded twice, not
// three times), which the bound's 3u covers.
//   Interleaved layout: a head's pairs (x[2i], x[2i+1]) and the table row's (cos, sin) at [2i], [2i+1] are both
//   complex numbers in MVE's (re, im) lane order, so the rotation is a complex product: VCMUL (x_a c, x_a s), then
//   VCMLA #90 adds (-x_b s, x_b c). Two pairs per vector; an odd last pair is a predicated two-lane tail.
//   Half layout: four pairs per vector, x_a and x_b from the two halves, cos and sin de-interleaved from the
//   table row (VLD2, or a predicated gather for the last pairs).
#ifndef EDGEATTN_LIB_ROPE_ROPE_MVE_H_
#define EDGEATTN_LIB_ROPE_ROPE_MVE_H_

#include "lib/common/mve.h"
#include "lib/rope/rope_scalar.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// One head, interleaved pairs: head[0 .. rotary_dim) times the table row as complex numbers.
inline void RopeHeadInterleaved(float* head, const float* row, size_t rotary_dim) {
  size_t j = 0;
  for (; j + kLanes <= rotary_dim; j += kLanes) {
    const float32x4_t x = vldrwq_f32(head + j), t = vldrwq_f32(row + j);
    vstrwq_f32(head + j, vcmlaq_rot90_f32(vcmulq_f32(x, t), x, t));
  }
  if (j < rotary_dim) {
    const float32x4_t x = LoadTail(head + j, rotary_dim - j), t = LoadTail(row + j, rotary_dim - j);
    StoreTail(head + j, vcmlaq_rot90_f32(vcmulq_f32(x, t), x, t), rotary_dim - j);
  }
}

// Rotates four (or, predicated, fewer) half-layout pairs given their cos and sin.
inline void RotateHalfPairs(float* a, float* b, float32x4_t c, float32x4_t s, size_t count) {
  const float32x4_t xa = count == kLanes ? vldrwq_f32(a) : LoadTail(a, count);
  const float32x4_t xb = count == kLanes ? vldrwq_f32(b) : LoadTail(b, count);
  const float32x4_t ya = vfmsq_f32(vmulq_f32(xa, c), xb, s);
  const float32x4_t yb = vfmaq_f32(vmulq_f32(xb, c), xa, s);
  if (count == kLanes) {
    vstrwq_f32(a, ya);
    vstrwq_f32(b, yb);
  } else {
    StoreTail(a, ya, count);
    StoreTail(b, yb, count);
  }
}

// One head, half layout: pairs (head[i], head[i + rotary_dim/2]).
inline void RopeHeadHalf(float* head, const float* row, size_t rotary_dim) {
  const size_t half = rotary_dim / 2;
  size_t i = 0;
  for (; i + kLanes <= half; i += kLanes) {
    const float32x4x2_t cs = vld2q_f32(row + 2 * i);  // val[0] = cos of pairs i..i+3, val[1] = sin
    RotateHalfPairs(head + i, head + half + i, cs.val[0], cs.val[1], kLanes);
  }
  if (i < half) {
    const size_t rest = half - i;
    const uint32x4_t even = vidupq_n_u32(0, 2);  // word offsets 0, 2, 4, 6
    const mve_pred16_t p = FirstLanes(rest);
    const float32x4_t c = vldrwq_gather_shifted_offset_z_f32(row + 2 * i, even, p);
    const float32x4_t s = vldrwq_gather_shifted_offset_z_f32(row + 2 * i + 1, even, p);
    RotateHalfPairs(head + i, head + half + i, c, s, rest);
  }
}

// The table variant's loops (ForEachHeadWithTableRow, rope_scalar.h) with the heads rotated by the functions above.
inline void RopeWithTableMve(const internal::RopeProblem& p, const float* table, size_t table_first_position, float* x,
                             size_t seq_len, size_t first_position) {
  internal::ForEachHeadWithTableRow(p, table, table_first_position, x, seq_len, first_position,
                                    [&p](float* head, const float* row) {
                                      if (p.half) {
                                        RopeHeadHalf(head, row, p.rotary_dim);
                                      } else {
                                        RopeHeadInterleaved(head, row, p.rotary_dim);
                                      }
                                    });
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_ROPE_ROPE_MVE_H_

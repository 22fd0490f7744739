// SPDX-License-Identifier: Apache-2.0
// The decode path's two inner steps on Helium (MVE) for float rows (lib/attention/decode-inl.h, DecodeKernels): the
// scores of a tile of keys and P·V of the tile into the output rows. Contract: attention.h's bound, whose terms the
// tiled path's arithmetic meets (4-lane partial sums, fused multiply-adds); MVE flushes subnormals, so its
// underflow term is the flush-to-zero form. Each query head is computed on its own with the same operations for any
// number of heads GH sharing a KV head, so a head's bits do not depend on GH. Tails are predicated: nothing past a
// row's last column is read or written.
#ifndef EDGEATTN_LIB_BACKEND_DECODE_MVE_H_
#define EDGEATTN_LIB_BACKEND_DECODE_MVE_H_

#include <float.h>
#include <stddef.h>

#include "lib/common/float_util.h"
#include "lib/common/mve.h"
#include "lib/common/row_source.h"
#include "lib/exp/exp_scalar.h"
#include "lib/linear/linear_mve.h"
#include "lib/softmax/softmax_mve.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

inline const float* FloatRow(const unsigned char* row) {
  return static_cast<const float*>(static_cast<const void*>(row));  // rows of floats are 4-byte aligned
}

// s[h][t] = (q[h] . k_t) * scale for t < nb and GH heads: kKeys keys per pass over a query row, so each query vector
// load feeds kKeys VFMAs (DotRowPtrs, the linear kernel's). Four keys spill some of the pass's state (a 152-byte
// frame, 96 with two keys) for 6% fewer instructions per decode step (docs/performance.md, step H1); the deepest
// entry point is then 936 bytes of stack, within the 1 KiB the stack check bounds. Out of line, as DecodePvMve:
// inlined, their registers grew the decode drivers' frames.
template <size_t GH>
__attribute__((noinline)) void DecodeScoresMve(const float* const* q, const internal::RowSource& k, size_t head_dim,
                                               size_t nb, float scale, float* const* s) {
  constexpr size_t kKeys = 4;
  const float* rows[kKeys];
  float dots[kKeys];
  size_t t = 0;
  for (; t + kKeys <= nb; t += kKeys) {
    for (size_t j = 0; j < kKeys; ++j) rows[j] = FloatRow(k.Row(t + j));
    for (size_t h = 0; h < GH; ++h) {
      DotRowPtrs<kKeys>(q[h], rows, head_dim, dots);
      for (size_t j = 0; j < kKeys; ++j) s[h][t + j] = dots[j] * scale;
    }
  }
  for (; t < nb; ++t) {
    rows[0] = FloatRow(k.Row(t));
    for (size_t h = 0; h < GH; ++h) {
      DotRowPtrs<1>(q[h], rows, head_dim, dots);
      s[h][t] = dots[0] * scale;
    }
  }
}

// Columns [c, c + lanes_total) of one head's output, (kVectors - 1) kLanes < lanes_total <= kVectors kLanes, in
// kVectors accumulators (the last predicated when short): per V row j
// (in order, through the ring's two runs) acc += p[j] v_j, then out = out alpha + acc (a later tile) or acc.
template <size_t kVectors>
inline void PvColumnsMve(const float* p, size_t n, const internal::RowSource& v, float* out, size_t c,
                         size_t lanes_total, float alpha, bool rescale) {
  float32x4_t acc[kVectors];
  for (size_t k = 0; k < kVectors; ++k) acc[k] = vdupq_n_f32(0.0f);
  const size_t wrap = v.Wrap(n);
  for (size_t run = 0; run < 2; ++run) {
    const size_t begin = run == 0 ? 0 : wrap, end = run == 0 ? wrap : n;
    const unsigned char* row = (run == 0 ? v.Row(0) : v.base) + c * sizeof(float);
    for (size_t j = begin; j < end; ++j, row += v.row_bytes) {
      const float* x = FloatRow(row);
      for (size_t k = 0; k < kVectors; ++k) {
        const size_t lanes = lanes_total - k * kLanes < kLanes ? lanes_total - k * kLanes : kLanes;
        acc[k] = vfmaq_n_f32(acc[k], LoadLanes(x + k * kLanes, lanes), p[j]);
      }
    }
  }
  for (size_t k = 0; k < kVectors; ++k) {
    const size_t lanes = lanes_total - k * kLanes < kLanes ? lanes_total - k * kLanes : kLanes;
    float* o = out + c + k * kLanes;
    float32x4_t y = acc[k];
    if (rescale) y = vfmaq_n_f32(y, LoadLanes(o, lanes), alpha);
    StoreLanes(o, y, lanes);
  }
}

// out[h][c] = (rescale ? out[h][c] alpha[h] : 0) + sum_{j < n} p[h][j] v_j[c] for c < width, GH heads: blocks of 16
// columns (four accumulators, the V row's four vectors loaded once per key), then the rest in one block of 1 to 4
// vectors.
template <size_t GH>
__attribute__((noinline)) void DecodePvMve(const float* const* p, size_t n, const internal::RowSource& v,
                                           float* const* out, size_t width, const float* alpha, bool rescale) {
  for (size_t h = 0; h < GH; ++h) {
    size_t c = 0;
    for (; c + 4 * kLanes <= width; c += 4 * kLanes)
      PvColumnsMve<4>(p[h], n, v, out[h], c, 4 * kLanes, alpha[h], rescale);
    const size_t rest = width - c;
    if (rest > 3 * kLanes) {
      PvColumnsMve<4>(p[h], n, v, out[h], c, rest, alpha[h], rescale);
    } else if (rest > 2 * kLanes) {
      PvColumnsMve<3>(p[h], n, v, out[h], c, rest, alpha[h], rescale);
    } else if (rest > kLanes) {
      PvColumnsMve<2>(p[h], n, v, out[h], c, rest, alpha[h], rescale);
    } else if (rest > 0) {
      PvColumnsMve<1>(p[h], n, v, out[h], c, rest, alpha[h], rescale);
    }
  }
}

// The largest of the n >= 1 scores in s, or NaN if one of them is not finite (decode-inl.h, DecodeTileMax). A
// non-finite score is found by its bits: |x| as an unsigned integer at least infinity's (mve.h: no float comparison
// decides a NaN lane); VMAXNM ignores NaN lanes, so the float max is only read when every lane was finite.
inline float DecodeTileMaxMve(const float* s, size_t n) {
  const float32x4_t lowest = vdupq_n_f32(-FLT_MAX);
  const uint32x4_t magnitude_mask = vdupq_n_u32(0x7FFFFFFFu);
  float32x4_t m = lowest;
  uint32x4_t magnitude = vdupq_n_u32(0);
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const float32x4_t x = vldrwq_f32(s + j);
    magnitude = vmaxq_u32(magnitude, vandq_u32(vreinterpretq_u32_f32(x), magnitude_mask));
    m = vmaxnmq_f32(m, x);
  }
  if (j < n) {  // lanes past the scores load as +0: their magnitude is 0, and they keep m's lanes
    const float32x4_t x = LoadTail(s + j, n - j);
    magnitude = vmaxq_u32(magnitude, vandq_u32(vreinterpretq_u32_f32(x), magnitude_mask));
    m = vpselq_f32(vmaxnmq_f32(m, x), m, FirstLanes(n - j));
  }
  if (vmaxvq_u32(0, magnitude) >= 0x7F800000u) return internal::kQuietNaN;
  return vmaxnmvq_f32(-FLT_MAX, m);
}

// The online-softmax step of one head after a tile of nb finite scores s (decode-inl.h, DecodeSoftmaxStep, whose
// contract this keeps): s becomes the weights e^(s - m_new) with the rounding of s - m_new folded in (softmax_mve.h,
// ExpMinusMax), summed in four lanes and the lanes combined as SumLanes does; m and l updated; returns alpha =
// e^(m_old - m_new) (0 on the first tile). MVE rounds to nearest whatever the caller's mode, so the exp's range
// reduction is to nearest with or without kToNearest; alpha and l, one value each, stay on the scalar FPU as on
// every path. Out of line: one copy, called once per head and tile.
__attribute__((noinline)) inline float DecodeSoftmaxStepMve(float* s, size_t nb, float tile_max, bool first,
                                                           float& m, float& l) {
  const float m_new = tile_max > m ? tile_max : m;
  const float alpha = first ? 0.0f : internal::ExpRr2P6Shifted(m - m_new, internal::TwoSumError(m, -m_new, m - m_new));
  const float32x4_t neg_m = vdupq_n_f32(-m_new);
  float32x4_t sum = vdupq_n_f32(0.0f);
  size_t j = 0;
  for (; j + kLanes <= nb; j += kLanes) {
    const float32x4_t e = ExpMinusMax(vldrwq_f32(s + j), neg_m);
    vstrwq_f32(s + j, e);
    sum = vaddq_f32(sum, e);
  }
  if (j < nb) {  // lanes past the scores are -inf (the predicated load's zeros replaced): e^-inf = +0
    const float32x4_t x = vpselq_f32(LoadTail(s + j, nb - j), vdupq_n_f32(-internal::kInfinity), FirstLanes(nb - j));
    const float32x4_t e = ExpMinusMax(x, neg_m);
    StoreTail(s + j, e, nb - j);
    sum = vaddq_f32(sum, e);
  }
  const float tile_sum = SumLanes(sum);
  l = first ? tile_sum : l * alpha + tile_sum;
  m = m_new;
  return alpha;
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_BACKEND_DECODE_MVE_H_

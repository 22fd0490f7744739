// SPDX-License-Identifier: Apache-2.0
// The decode path's two inner steps on Helium (MVE) for float rows (lib/attention/decode-inl.h, DecodeKernels): the
// scores of a tile of keys and P·V of the tile into the output rows. Contract: attention.h's bound, whose terms the
// tiled path's arithmetic meets (4-lane partial sums, fused multiply-adds); MVE flushes subnormals, so its
// underflow term is the flush-to-zero form. Each query head is computed on its own with the same operations for any
// number of heads GH sharing a KV head, so a head's bits do not depend on GH. Tails are predicated: nothing past a
// row's last column is read or written.
#ifndef EDGEATTN_LIB_BACKEND_DECODE_MVE_H_
#define EDGEATTN_LIB_BACKEND_DECODE_MVE_H_

#include <stddef.h>

#include "lib/common/mve.h"
#include "lib/common/row_source.h"
#include "lib/linear/linear_mve.h"

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

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_BACKEND_DECODE_MVE_H_

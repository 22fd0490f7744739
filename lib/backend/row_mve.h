// SPDX-License-Identifier: Apache-2.0
// The row path's kernels on Helium (MVE) (lib/attention/attention_driver.h's policy; the row path of row-inl.h):
// the scores of one query row against its visible keys, the row's softmax (softmax_mve.h) and P·V. Taken by the
// HELIUM backend for calls with an additive mask, for the tiled path's shapes (RowKernelsMve below), for every
// call under a directed rounding mode, and for edgeattn_attention_weights. Contract: attention.h's bound, with the
// flush-to-zero form of its underflow term (MVE flushes subnormals, lib/common/mve.h): the scores are linear_mve.h's
// dot products (4-lane partial sums, one VFMA per vector), P·V sums each column in blocks of internal::kKeyBlock keys
// as row-inl.h does. Masked keys (mask -inf) are not read. Tails are predicated: nothing past a row's last column is
// read or written.
#ifndef EDGEATTN_LIB_BACKEND_ROW_MVE_H_
#define EDGEATTN_LIB_BACKEND_ROW_MVE_H_

#include <stddef.h>

#include "lib/attention/attention_driver.h"
#include "lib/common/float_util.h"
#include "lib/common/mve.h"
#include "lib/linear/linear_mve.h"
#include "lib/softmax/softmax_mve.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// scores[j] = (q . k_j) scale + mask_row[j] for the unmasked j < n, -inf for the masked ones: four keys per pass
// over q (DotRowPtrs<4>: each query vector feeds four VFMAs), the last one to three keys one at a time. A key's
// dot has the same bits in either (each accumulator sums its own row in the same order).
__attribute__((noinline)) inline void RowScoresMve(const float* q, const float* k, size_t k_stride, size_t head_dim,
                                                   size_t n, float scale, const float* mask_row, float* scores) {
  constexpr size_t kKeys = 4;
  size_t j = 0;
  while (j < n) {
    const float* rows[kKeys];
    size_t keys[kKeys];
    size_t m = 0;
    for (; j < n && m < kKeys; ++j) {
      if (internal::KeyMasked(mask_row, j)) {
        scores[j] = -internal::kInfinity;
      } else {
        keys[m] = j;
        rows[m++] = k + j * k_stride;
      }
    }
    float dots[kKeys];
    if (m == kKeys) {
      DotRowPtrs<kKeys>(q, rows, head_dim, dots);
    } else {
      for (size_t t = 0; t < m; ++t) DotRowPtrs<1>(q, rows + t, head_dim, dots + t);
    }
    for (size_t t = 0; t < m; ++t) {
      float s = dots[t] * scale;
      if (mask_row != nullptr) s += mask_row[keys[t]];
      scores[keys[t]] = s;
    }
  }
}

// Columns [0, lanes_total) of out, (kVectors - 1) kLanes < lanes_total <= kVectors kLanes (kFull: lanes_total =
// kVectors kLanes, no predicate): per block of kKeyBlock keys, acc += p[j] v_j over the block's unmasked keys in
// registers, then out = (first block ? 0 : out) + acc, the order of row-inl.h's WeightedSum.
template <size_t kVectors, bool kFull>
inline void RowWeightedColumnsMve(const float* p, size_t n, const float* v, size_t v_stride, const float* mask_row,
                                  float* out, size_t lanes_total) {
  size_t lanes[kVectors];
  for (size_t c = 0; c < kVectors; ++c) {
    lanes[c] = kFull || lanes_total - c * kLanes >= kLanes ? kLanes : lanes_total - c * kLanes;
  }
  for (size_t j0 = 0; j0 < n; j0 += internal::kKeyBlock) {
    const size_t j_end = n - j0 < internal::kKeyBlock ? n : j0 + internal::kKeyBlock;
    float32x4_t acc[kVectors];
    for (size_t c = 0; c < kVectors; ++c) acc[c] = vdupq_n_f32(0.0f);
    const float* row = v + j0 * v_stride;
    for (size_t j = j0; j < j_end; ++j, row += v_stride) {
      if (internal::KeyMasked(mask_row, j)) continue;
      for (size_t c = 0; c < kVectors; ++c) {
        const float32x4_t x = kFull ? vldrwq_f32(row + c * kLanes) : LoadLanes(row + c * kLanes, lanes[c]);
        acc[c] = vfmaq_n_f32(acc[c], x, p[j]);
      }
    }
    for (size_t c = 0; c < kVectors; ++c) {
      float* o = out + c * kLanes;
      const float32x4_t total = j0 == 0 ? vdupq_n_f32(0.0f) : LoadLanes(o, lanes[c]);
      StoreLanes(o, vaddq_f32(total, acc[c]), lanes[c]);
    }
  }
}

// The last rest (0 < rest < kVectors kLanes) columns: one block of 1 to kVectors vectors.
template <size_t kVectors>
inline void RowWeightedRestMve(const float* p, size_t n, const float* v, size_t v_stride, const float* mask_row,
                               float* out, size_t rest) {
  if constexpr (kVectors > 1) {
    if (rest <= (kVectors - 1) * kLanes) {
      return RowWeightedRestMve<kVectors - 1>(p, n, v, v_stride, mask_row, out, rest);
    }
  }
  RowWeightedColumnsMve<kVectors, false>(p, n, v, v_stride, mask_row, out, rest);
}

// out[c] = sum over the unmasked j < n of p[j] v_j[c], c < value_dim: columns in blocks of four vectors (the V
// row's four vectors loaded once per key into four accumulators), the rest in one block of fewer.
__attribute__((noinline)) inline void RowWeightedSumMve(const float* p, size_t n, const float* v, size_t v_stride,
                                                        const float* mask_row, float* out, size_t value_dim) {
  constexpr size_t kVectors = 4;
  constexpr size_t kBlock = kVectors * kLanes;
  size_t c = 0;
  for (; c + kBlock <= value_dim; c += kBlock) {
    RowWeightedColumnsMve<kVectors, true>(p, n, v + c, v_stride, mask_row, out + c, kBlock);
  }
  if (c < value_dim) RowWeightedRestMve<kVectors>(p, n, v + c, v_stride, mask_row, out + c, value_dim - c);
}

// The row path's policy (attention_driver.h) on MVE. kRunsTiledShapes: the tiled path's shapes (prefill chunks of
// at least kAttentionTiledMinQueries rows, attention-inl.h) run these kernels too. The tiled path is Highway code,
// one-lane on the M55's static target, which costs more instructions than the scalar path (a causal prefill of 16
// rows over 64 keys, d = 64: 0.95x scalar with GCC, 1.00x with clang); the row path on MVE is several times faster.
struct RowKernelsMve {
  static constexpr bool kRunsTiledShapes = true;

  static void Scores(const float* q, const float* k, size_t k_stride, size_t head_dim, size_t n, float scale,
                     const float* mask_row, float* scores) {
    RowScoresMve(q, k, k_stride, head_dim, n, scale, mask_row, scores);
  }
  static void SoftmaxRow(const float* in, float* out, size_t n) { SoftmaxRowMve(in, out, n); }
  static void WeightedSum(const float* p, size_t n, const float* v, size_t v_stride, const float* mask_row, float* out,
                          size_t value_dim) {
    RowWeightedSumMve(p, n, v, v_stride, mask_row, out, value_dim);
  }
};

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_BACKEND_ROW_MVE_H_

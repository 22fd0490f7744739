// SPDX-License-Identifier: Apache-2.0
// Attention control flow shared by the scalar and the SIMD path: which keys a query sees, head grouping,
// masking, and the order of the three row kernels. The kernels come from a policy class:
//
//   struct Kernels {
//     // The Highway targets' path chooser only (attention-inl.h): true if the tiled path's shapes run these kernels.
//     static constexpr bool kRunsTiledShapes;
//     // scores[j] = dot(q, k_j) * scale + mask_row[j] for j < n, -inf (without reading k_j) where masked.
//     static void Scores(const float* q, const float* k, size_t k_stride, size_t head_dim, size_t n,
//                        float scale, const float* mask_row, float* scores);
//     static void SoftmaxRow(const float* in, float* out, size_t n);           // in == out
//     // out[c] = sum over unmasked j < n of p[j] * v_j[c]; masked rows of v are not read.
//     static void WeightedSum(const float* p, size_t n, const float* v, size_t v_stride,
//                             const float* mask_row, float* out, size_t value_dim);
//   };
//
// The kernels are called, not inlined, across the target boundary (each SIMD policy is compiled for its own
// target, this file for the baseline), so they work on whole rows to keep the call overhead negligible.
#ifndef EDGEATTN_LIB_ATTENTION_ATTENTION_DRIVER_H_
#define EDGEATTN_LIB_ATTENTION_ATTENTION_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/attention.h"
#include "lib/common/float_util.h"

namespace edgeattn {
namespace internal {

// A validated descriptor: num_kv_heads and scale resolved.
struct AttentionProblem {
  size_t q_len;
  size_t kv_len;
  size_t head_dim;
  size_t value_dim;
  size_t num_heads;
  size_t num_kv_heads;
  float scale;
  bool causal;
  const float* mask;  // [q_len][kv_len] or null
};

// Keys [0, VisibleKeys) are not causally masked for query i (bottom-right aligned: j <= i + kv_len - q_len).
inline size_t VisibleKeys(const AttentionProblem& p, size_t i) {
  if (!p.causal) return p.kv_len;
  if (i + p.kv_len < p.q_len) return 0;
  const size_t last = i + p.kv_len - p.q_len;
  return last + 1 < p.kv_len ? last + 1 : p.kv_len;
}

// P V sums each output over the keys in blocks: a partial sum per block of kKeyBlock keys, added to the total.
// Rounding error then grows like sqrt(kKeyBlock) + sqrt(n / kKeyBlock) instead of sqrt(n): over 512 keys of
// random data the relative error per row drops from 1.5e-6 to below 1e-6, for one addition per 32 FMAs.
constexpr size_t kKeyBlock = 32;

// The query heads [h_begin, h_end) and rows [i_begin, i_end) a call (the whole problem) or a part of the work
// split (lib/attention/attention_split.h) computes.
struct AttentionRange {
  size_t h_begin, h_end;
  size_t i_begin, i_end;
};

inline AttentionRange WholeProblem(const AttentionProblem& p) { return AttentionRange{0, p.num_heads, 0, p.q_len}; }

inline bool KeyMasked(const float* mask_row, size_t j) { return mask_row != nullptr && mask_row[j] == -kInfinity; }

inline float* AlignedScratch(void* workspace) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(workspace);
  return reinterpret_cast<float*>((p + (kWorkspaceAlignment - 1)) & ~uintptr_t{kWorkspaceAlignment - 1});
}

// Query row i, head h: scores of the visible keys in `scores`, softmax, P V into the output row.
template <class Kernels>
void AttentionRow(const AttentionProblem& p, const float* q, const float* k, const float* v, float* out, float* scores,
                  size_t i, size_t h) {
  const size_t g = h / (p.num_heads / p.num_kv_heads);
  const size_t k_stride = p.num_kv_heads * p.head_dim;
  const size_t v_stride = p.num_kv_heads * p.value_dim;
  const float* mask_row = p.mask != nullptr ? p.mask + i * p.kv_len : nullptr;
  const size_t n = VisibleKeys(p, i);
  float* out_row = out + (i * p.num_heads + h) * p.value_dim;
  if (n == 0) return FillRow(out_row, p.value_dim, 0.0f);
  Kernels::Scores(q + (i * p.num_heads + h) * p.head_dim, k + g * p.head_dim, k_stride, p.head_dim, n, p.scale,
                  mask_row, scores);
  Kernels::SoftmaxRow(scores, scores, n);
  Kernels::WeightedSum(scores, n, v + g * p.value_dim, v_stride, mask_row, out_row, p.value_dim);
}

template <class Kernels>
void AttentionRows(const AttentionProblem& p, const float* q, const float* k, const float* v, float* out, float* scores,
                   const AttentionRange& r) {
  for (size_t i = r.i_begin; i < r.i_end; ++i) {
    for (size_t h = r.h_begin; h < r.h_end; ++h) AttentionRow<Kernels>(p, q, k, v, out, scores, i, h);
  }
}

template <class Kernels>
void AttentionRows(const AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                   float* scores) {
  AttentionRows<Kernels>(p, q, k, v, out, scores, WholeProblem(p));
}

template <class Kernels>
void AttentionWeightRows(const AttentionProblem& p, const float* q, const float* k, float* weights) {
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t q_stride = p.num_heads * p.head_dim;
  const size_t k_stride = p.num_kv_heads * p.head_dim;
  for (size_t h = 0; h < p.num_heads; ++h) {
    const size_t g = h / group;
    for (size_t i = 0; i < p.q_len; ++i) {
      const float* mask_row = p.mask != nullptr ? p.mask + i * p.kv_len : nullptr;
      float* w_row = weights + (h * p.q_len + i) * p.kv_len;
      const size_t n = VisibleKeys(p, i);
      if (n != 0) {
        Kernels::Scores(q + i * q_stride + h * p.head_dim, k + g * p.head_dim, k_stride, p.head_dim, n, p.scale,
                        mask_row, w_row);
        Kernels::SoftmaxRow(w_row, w_row, n);
      }
      FillRow(w_row + n, p.kv_len - n, 0.0f);
    }
  }
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_ATTENTION_ATTENTION_DRIVER_H_

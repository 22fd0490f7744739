// SPDX-License-Identifier: Apache-2.0
// Attention against a KV cache, scalar reference: per query row and head, the visible positions in tiles of
// kKvScalarTile keys dequantised into the workspace, then attention_scalar.h's row kernels. Tiles of 32 keys are
// P V's key blocks (kKeyBlock), so adding each tile's weighted sum to the row repeats WeightedSum's own additions:
// an F32 cache gives the bits of scalar::Attention on the same keys.
#ifndef EDGEATTN_LIB_KV_CACHE_KV_CACHE_SCALAR_H_
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_SCALAR_H_

#include <stddef.h>

#include "lib/attention/attention_scalar.h"
#include "lib/kv_cache/kv_cache_storage.h"

namespace edgeattn {
namespace internal {

static_assert(kKvScalarTile == kKeyBlock, "the scalar tile must be P V's key block for bit-identical sums");

// A validated call: the cache's layout and held range, the queries' shape.
struct KvAttentionProblem {
  KvLayout layout;
  const unsigned char* storage;
  size_t length;
  size_t q_len;
  size_t num_heads;
  size_t group;  // query heads per kv head
  float scale;
  bool causal;
};

// Positions [*lo, *hi) that query i sees.
inline void KvVisible(const KvAttentionProblem& p, size_t i, size_t* lo, size_t* hi) {
  const size_t end = p.causal ? p.length - p.q_len + i + 1 : p.length;
  const size_t window = p.layout.window;
  *hi = end;
  *lo = window != 0 && end > window ? end - window : 0;
}

// One side's rows of kv head g for the positions lo .. lo + n - 1 into dst [n][width].
inline void KvLoadTile(const KvAttentionProblem& p, size_t g, KvSide side, size_t lo, size_t n, float* dst) {
  const size_t width = p.layout.Width(side);
  for (size_t j = 0; j < n; ++j) {
    LoadHeadRow(p.layout, p.storage, (lo + j) % p.layout.capacity, g, side, dst + j * width);
  }
}

// Query row i, query head h: its scores in the workspace, the row's softmax, P V tile by tile.
inline void KvAttentionRowScalar(const KvAttentionProblem& p, const float* q, float* out, size_t i, size_t h,
                                 float* ws) {
  const KvLayout& l = p.layout;
  const size_t dk = l.head_dim, dv = l.value_dim;
  const size_t vis_max = l.window != 0 ? l.window : l.capacity;
  float* scores = ws;  // the row's scores, then weights
  float* k_tile = scores + vis_max;
  float* v_tile = k_tile + KvMin(kKvScalarTile, vis_max) * dk;
  float* tile_sum = v_tile + KvMin(kKvScalarTile, vis_max) * dv;
  size_t lo, hi;
  KvVisible(p, i, &lo, &hi);
  const size_t n = hi - lo;
  const size_t g = h / p.group;
  const float* q_row = q + (i * p.num_heads + h) * dk;
  float* out_row = out + (i * p.num_heads + h) * dv;
  for (size_t j0 = 0; j0 < n; j0 += kKvScalarTile) {
    const size_t nb = n - j0 < kKvScalarTile ? n - j0 : kKvScalarTile;
    KvLoadTile(p, g, KvSide::kKey, lo + j0, nb, k_tile);
    ScalarAttentionKernels::Scores(q_row, k_tile, dk, dk, nb, p.scale, nullptr, scores + j0);
  }
  ScalarAttentionKernels::SoftmaxRow(scores, scores, n);
  FillRow(out_row, dv, 0.0f);
  for (size_t j0 = 0; j0 < n; j0 += kKvScalarTile) {
    const size_t nb = n - j0 < kKvScalarTile ? n - j0 : kKvScalarTile;
    KvLoadTile(p, g, KvSide::kValue, lo + j0, nb, v_tile);
    ScalarAttentionKernels::WeightedSum(scores + j0, nb, v_tile, dv, nullptr, tile_sum, dv);
    for (size_t c = 0; c < dv; ++c) out_row[c] += tile_sum[c];
  }
}

inline void KvAttentionScalar(const KvAttentionProblem& p, const float* q, float* out, float* ws) {
  float* region = ws + KvStateFloats(p.q_len, p.group);  // the SIMD path's layout, for one workspace size
  for (size_t i = 0; i < p.q_len; ++i) {
    for (size_t h = 0; h < p.num_heads; ++h) KvAttentionRowScalar(p, q, out, i, h, region);
  }
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_KV_CACHE_KV_CACHE_SCALAR_H_

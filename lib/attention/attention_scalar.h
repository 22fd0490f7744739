// SPDX-License-Identifier: Apache-2.0
// Attention row kernels, scalar reference (the policy for attention_driver.h).
#ifndef EDGEATTN_LIB_ATTENTION_ATTENTION_SCALAR_H_
#define EDGEATTN_LIB_ATTENTION_ATTENTION_SCALAR_H_

#include <stddef.h>

#include "lib/attention/attention_driver.h"
#include "lib/dot/dot_scalar.h"
#include "lib/softmax/softmax_scalar.h"

namespace edgeattn {
namespace internal {

struct ScalarAttentionKernels {
  static void Scores(const float* q, const float* k, size_t k_stride, size_t head_dim, size_t n, float scale,
                     const float* mask_row, float* scores) {
    for (size_t j = 0; j < n; ++j) {
      if (KeyMasked(mask_row, j)) {
        scores[j] = -kInfinity;
        continue;
      }
      float s = DotScalar(q, k + j * k_stride, head_dim) * scale;
      if (mask_row != nullptr) s += mask_row[j];
      scores[j] = s;
    }
  }

  static void SoftmaxRow(const float* in, float* out, size_t n) { SoftmaxRowScalar(in, out, n); }

  // Keys in blocks of kKeyBlock, columns in chunks of kColumns (the block's partial sums live on the stack). Not
  // inlined: in its callers' frames the 256 bytes of partial sums stacked up with the softmax's frame (clang-14:
  // KvAttentionRowScalar 400 bytes, AttentionCached past the 1 KiB stack bound on the Cortex-M55).
  __attribute__((noinline)) static void WeightedSum(const float* p, size_t n, const float* v, size_t v_stride,
                                                    const float* mask_row, float* out, size_t value_dim) {
    constexpr size_t kColumns = 64;
    FillRow(out, value_dim, 0.0f);
    for (size_t c0 = 0; c0 < value_dim; c0 += kColumns) {
      const size_t width = value_dim - c0 < kColumns ? value_dim - c0 : kColumns;
      for (size_t j0 = 0; j0 < n; j0 += kKeyBlock) {
        const size_t j_end = n - j0 < kKeyBlock ? n : j0 + kKeyBlock;
        float partial[kColumns] = {};
        for (size_t j = j0; j < j_end; ++j) {
          if (KeyMasked(mask_row, j)) continue;
          const float* v_row = v + j * v_stride + c0;
          for (size_t c = 0; c < width; ++c) partial[c] += p[j] * v_row[c];
        }
        for (size_t c = 0; c < width; ++c) out[c0 + c] += partial[c];
      }
    }
  }
};

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_ATTENTION_ATTENTION_SCALAR_H_

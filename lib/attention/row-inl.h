// SPDX-License-Identifier: Apache-2.0
// The row path (docs/performance.md, row path): one query row at a time, the Highway policy for
// attention_driver.h. Taken with an additive mask when the small path does not apply.

#if defined(EDGEATTN_LIB_ATTENTION_ROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_ROW_INL_H_
#undef EDGEATTN_LIB_ATTENTION_ROW_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_ROW_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/common/float_util.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/dot/dot-inl.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The row path's kernels (see attention_driver.h for the contract).
struct RowKernels {
  static constexpr bool kRunsTiledShapes = false;  // the tiled path's shapes take the tiled path (attention-inl.h)

  static void Scores(const float* q, const float* k, size_t k_stride, size_t head_dim, size_t n, float scale,
                     const float* mask_row, float* scores) {
    const hn::ScalableTag<float> d;
    for (size_t j = 0; j < n; ++j) {
      if (internal::KeyMasked(mask_row, j)) {
        scores[j] = -internal::kInfinity;
        continue;
      }
      float s = Dot(d, q, k + j * k_stride, head_dim) * scale;
      if (mask_row != nullptr) s += mask_row[j];
      scores[j] = s;
    }
  }

  static void SoftmaxRow(const float* in, float* out, size_t n) { HWY_NAMESPACE::SoftmaxRow(in, out, n); }

  // Output columns stay in registers across all keys: four vectors per pass, then one, then the tail. Keys
  // in blocks of kKeyBlock, each block's partial sums added to the totals (see kKeyBlock).
  static void WeightedSum(const float* p, size_t n, const float* v, size_t v_stride, const float* mask_row, float* out,
                          size_t value_dim) {
    const hn::ScalableTag<float> d;
    const size_t N = hn::Lanes(d);
    size_t c = 0;
    for (; c + 4 * N <= value_dim; c += 4 * N) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
      for (size_t j0 = 0; j0 < n; j0 += internal::kKeyBlock) {
        const size_t j_end = n - j0 < internal::kKeyBlock ? n : j0 + internal::kKeyBlock;
        auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
        for (size_t j = j0; j < j_end; ++j) {
          if (internal::KeyMasked(mask_row, j)) continue;
          const auto pj = hn::Set(d, p[j]);
          const float* v_row = v + j * v_stride + c;
          b0 = hn::MulAdd(pj, hn::LoadU(d, v_row), b0);
          b1 = hn::MulAdd(pj, hn::LoadU(d, v_row + N), b1);
          b2 = hn::MulAdd(pj, hn::LoadU(d, v_row + 2 * N), b2);
          b3 = hn::MulAdd(pj, hn::LoadU(d, v_row + 3 * N), b3);
        }
        a0 = hn::Add(a0, b0);
        a1 = hn::Add(a1, b1);
        a2 = hn::Add(a2, b2);
        a3 = hn::Add(a3, b3);
      }
      hn::StoreU(a0, d, out + c);
      hn::StoreU(a1, d, out + c + N);
      hn::StoreU(a2, d, out + c + 2 * N);
      hn::StoreU(a3, d, out + c + 3 * N);
    }
    for (; c < value_dim; c += N) {
      const size_t width = value_dim - c < N ? value_dim - c : N;
      auto a = hn::Zero(d);
      for (size_t j0 = 0; j0 < n; j0 += internal::kKeyBlock) {
        const size_t j_end = n - j0 < internal::kKeyBlock ? n : j0 + internal::kKeyBlock;
        auto b = hn::Zero(d);
        for (size_t j = j0; j < j_end; ++j) {
          if (internal::KeyMasked(mask_row, j)) continue;
          const float* v_row = v + j * v_stride + c;
          b = hn::MulAdd(hn::Set(d, p[j]), width == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, width), b);
        }
        a = hn::Add(a, b);
      }
      if (width == N) {
        hn::StoreU(a, d, out + c);
      } else {
        StoreTail(d, a, out + c, width);
      }
    }
  }
};

// The row path over rows [range) on the row kernels RowK (RowKernels, or a backend's). Not inlined: its frame, with
// the kernels inlined into it, stays off the other paths' (Cortex-M: the documented 1 KiB worst case).
template <class RowK>
HWY_NOINLINE void RowAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                               float* out, float* scores, const internal::AttentionRange& range) {
  internal::AttentionRows<RowK>(p, q, k, v, out, scores, range);
}

// Row i, head h as the row path computes it (the same bits): the small paths finish a row whose scores are not
// all finite with it.
inline void RowPathRow(const internal::AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                       float* scores, size_t i, size_t h) {
  internal::AttentionRow<RowKernels>(p, q, k, v, out, scores, i, h);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// SPDX-License-Identifier: Apache-2.0
// The tiled path's packing of Q^T (docs/performance.md, tiled path): N x N squares of queries transposed in
// registers and scaled, for tiled-inl.h.

#if defined(EDGEATTN_LIB_ATTENTION_TILED_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_TILED_TRANSPOSE_INL_H_
#undef EDGEATTN_LIB_ATTENTION_TILED_TRANSPOSE_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_TILED_TRANSPOSE_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Packing Q^T: N x N squares transposed in registers. The gathers this replaced (one per column of Q^T) are
// microcode-assisted on some x86 cores and took a third of an L = 16 call (docs/performance.md, step 9).
// Off on SCALAR (one lane) and EMU128 (no permutes; small-stack targets), where scalar copies pack Q^T.
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr bool kTiledTranspose = false;
template <class D>
void TransposeScaledSquares(D, const float*, size_t, size_t, size_t, float, float*, size_t) {}
#else
constexpr bool kTiledTranspose = true;
constexpr size_t kTransposeLanes = HWY_MAX_BYTES / sizeof(float) < 16 ? HWY_MAX_BYTES / sizeof(float) : 16;

// dst[c * dst_stride + r] = src[r * src_stride + c] * scale for rows r < rows and columns c < cols, both
// multiples of the lane count N (full vectors of d: ConcatEven/ConcatOdd are exact only on full vectors).
// One square is log2(N) rounds over its N rows: row i of a round's output takes the even lanes of input
// rows 2i and 2i+1, row i + N/2 their odd lanes. Each round rotates the bits of (row, lane) by one place, so
// after log2(N) rounds element (r, c) of the square sits in lane r of row c. Bitwise the products the scalar
// copy would store. Fixed-width targets keep a square in registers; SVE's (and RVV's) vectors cannot form arrays, so
// there each round goes through a buffer on the stack.
#if HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128 || \
    HWY_TARGET == HWY_RVV
template <class D>
HWY_INLINE void TransposeScaledSquare(D d, const float* in, size_t in_stride, float scale, float* out,
                                      size_t out_stride) {
  const size_t N = hn::Lanes(d);
  const size_t half = N / 2;
  HWY_ALIGN float buf[2][kTransposeLanes * kTransposeLanes];
  const auto vscale = hn::Set(d, scale);
  size_t round = 0;
  for (size_t width = N; width > 1; width /= 2, ++round) {
    const bool first = width == N, last = width == 2;
    float* dst = last ? out : buf[round & 1];
    const size_t dst_stride = last ? out_stride : N;
    for (size_t i = 0; i < half; ++i) {
      auto lo = hn::LoadU(d, in + 2 * i * in_stride), hi = hn::LoadU(d, in + (2 * i + 1) * in_stride);
      if (first) lo = hn::Mul(lo, vscale), hi = hn::Mul(hi, vscale);
      hn::StoreU(hn::ConcatEven(d, hi, lo), d, dst + i * dst_stride);
      hn::StoreU(hn::ConcatOdd(d, hi, lo), d, dst + (i + half) * dst_stride);
    }
    in = dst;
    in_stride = N;
  }
}
#else
template <class D>
HWY_INLINE void TransposeScaledSquare(D d, const float* in, size_t in_stride, float scale, float* out,
                                      size_t out_stride) {
  constexpr size_t kN = hn::MaxLanes(D());
  using V = hn::Vec<D>;
  const auto vscale = hn::Set(d, scale);
  V a[kN], b[kN];
  for (size_t i = 0; i < kN; ++i) a[i] = hn::Mul(hn::LoadU(d, in + i * in_stride), vscale);
  for (size_t width = kN; width > 1; width /= 2) {
    for (size_t i = 0; i < kN / 2; ++i) {
      b[i] = hn::ConcatEven(d, a[2 * i + 1], a[2 * i]);
      b[i + kN / 2] = hn::ConcatOdd(d, a[2 * i + 1], a[2 * i]);
    }
    for (size_t i = 0; i < kN; ++i) a[i] = b[i];
  }
  for (size_t i = 0; i < kN; ++i) hn::StoreU(a[i], d, out + i * out_stride);
}
#endif

template <class D>
HWY_NOINLINE void TransposeScaledSquares(D d, const float* src, size_t src_stride, size_t rows, size_t cols,
                                         float scale, float* dst, size_t dst_stride) {
  const size_t N = hn::Lanes(d);
  for (size_t r0 = 0; r0 < rows; r0 += N) {
    for (size_t c0 = 0; c0 < cols; c0 += N) {
      TransposeScaledSquare(d, src + r0 * src_stride + c0, src_stride, scale, dst + c0 * dst_stride + r0, dst_stride);
    }
  }
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

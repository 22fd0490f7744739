// SPDX-License-Identifier: Apache-2.0
// The SIMD attention dispatcher: chooses one path from the shape and calls it (docs/performance.md, The
// attention paths). The paths live in row-inl.h, tiled-inl.h, decode-inl.h, small-inl.h and
// packed_small-inl.h; what they share in shared-inl.h.

#if defined(EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_
#undef EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/attention/attention_path.h"
#include "lib/attention/attention_split.h"
#include "lib/attention/decode_chunks-inl.h"
#include "lib/attention/packed_small-inl.h"
#include "lib/attention/row-inl.h"
#include "lib/attention/small-inl.h"
#include "lib/attention/tiled-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The path of a validated problem on this target, whose vectors hold `lanes` floats. From the shape alone:
//  - packed_small: at most 4 keys, no additive mask, x86 AVX2/AVX-512, and (causal) every row sees a key;
//  - small: every key in one vector and K^T of the head fits the stack (not on SCALAR/EMU128);
//  - row: an additive mask;
//  - tiled: at least kAttentionTiledMinQueries queries (and kv_len < 2^24: the block's visible-key counts are
//    exact in float lanes);
//  - decode: otherwise.
inline internal::AttentionPath ChooseAttentionPath(const internal::AttentionProblem& p, size_t lanes) {
  using internal::AttentionPath;
  if (PackedSmallApplies(p)) return AttentionPath::kPackedSmall;
  if (SmallAttentionApplies(p, lanes)) return AttentionPath::kSmall;
  if (p.mask != nullptr) return AttentionPath::kRow;
  if (p.q_len >= kAttentionTiledMinQueries && p.kv_len < (size_t{1} << 24)) return AttentionPath::kTiled;
  return AttentionPath::kDecode;
}

inline internal::AttentionPath AttentionPathOf(const internal::AttentionProblem& p) {
  return ChooseAttentionPath(p, hn::Lanes(hn::ScalableTag<float>()));
}

// Why this is safe: the path is fixed by the shape before anything is written, and every path completes the call
// on its own. A row (packed_small: a block of rows) whose scores hold a NaN or an infinity is finished inside
// its path, before its output is stored, by a per-row kernel that follows the softmax rules (the small paths:
// the row path's kernels, RowPathRow; tiled: FallbackRow; decode: its chunk partials carry the rules, see
// decode-inl.h, DecodePartial). No path writes part of `out` and then
// hands the call to another, so `out` may hold anything on entry (it never aliases an input).
//
// The caller's floating-point environment: under a directed rounding mode the exp inside the small, packed_small,
// tiled and decode loops would round its range reduction in that mode (weights up to 270 ULP off); making those
// loops mode-proof costs them in the default environment (lib/softmax/softmax-inl.h, ExpMinusMax). So the mode
// is read once per call (no write to the control register) and such a call runs the row path, whose softmax
// steps its reduction to nearest (attention.h states the bound). AttentionPathForTest reports the shape's
// choice, the path taken to nearest.
// Inlined into its callers, as before it took policies: out of line its frame (368 bytes on Cortex-M55) added to
// the tiled path's.
// The path of p with the row kernels RowK: ChooseAttentionPath's, except that a backend's row kernels may take the
// tiled path's shapes (RowK::kRunsTiledShapes: the HELIUM backend, lib/backend/row_mve.h).
template <class RowK>
inline internal::AttentionPath AttentionPathWith(const internal::AttentionProblem& p) {
  const internal::AttentionPath path = AttentionPathOf(p);
  if (RowK::kRunsTiledShapes && path == internal::AttentionPath::kTiled) return internal::AttentionPath::kRow;
  return path;
}

template <class DecodeK, class RowK>
HWY_INLINE void RunAttentionPath(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                                 float* out, float* scores, const internal::AttentionRange& range) {
  switch (AttentionPathWith<RowK>(p)) {
    case internal::AttentionPath::kPackedSmall:
      return PackedSmallAttention(p, q, k, v, out, scores, range);
    case internal::AttentionPath::kSmall:
      return SmallAttention(p, q, k, v, out, scores, range);
    case internal::AttentionPath::kTiled:
      if constexpr (!RowK::kRunsTiledShapes) return TiledAttention(p, q, k, v, out, scores, range);
      break;
    case internal::AttentionPath::kDecode:
      return DecodeAttention<DecodeK>(p, q, k, v, out, scores, range, 1, true);
    case internal::AttentionPath::kRow:
      break;
  }
  RowAttention<RowK>(p, q, k, v, out, scores, range);
}

// A shape with several key chunks (attention_split.h: decode shapes only) runs the chunked decode rows in every
// floating-point environment: under a directed mode each chunk takes the two-pass kernel whose exp steps its
// reduction to nearest (decode-inl.h, DecodeChunkTwoPass), so that the parts of the work split, each in its
// thread's mode, can give the single call's bits. DecodeK and RowK: the decode path's and the row path's kernels
// (Highway's, or a backend's: lib/common/backend-inl.h).
template <class DecodeK, class RowK>
HWY_INLINE void AttentionForwardWith(const internal::AttentionProblem& p, const float* q, const float* k,
                                     const float* v, float* out, float* scores) {
  const size_t chunks = internal::KeyChunks(p.q_len, p.kv_len, p.mask != nullptr);
  const bool to_nearest = ExpToNearest();
  if (chunks > 1) {
    return DecodeAttention<DecodeK>(p, q, k, v, out, scores, internal::WholeProblem(p), chunks, to_nearest);
  }
  if (HWY_UNLIKELY(!to_nearest)) return RowAttention<RowK>(p, q, k, v, out, scores, internal::WholeProblem(p));
  RunAttentionPath<DecodeK, RowK>(p, q, k, v, out, scores, internal::WholeProblem(p));
}

// Part `part` of the work split (attention_split.h): its head and rows on the call's path (the same blocks, so
// the same bits), or, for a chunked shape, its chunk's partials into shared. The rounding mode is read per part:
// each part follows AttentionForward's rule in its own thread's environment.
template <class DecodeK, class RowK>
HWY_INLINE void AttentionPartForwardWith(const internal::AttentionProblem& p, size_t part, const float* q,
                                         const float* k, const float* v, float* out, float* shared, float* scores) {
  const internal::PartGrid grid = internal::MakePartGrid(p.num_heads, p.q_len, p.kv_len, p.mask != nullptr, p.causal);
  const internal::PartCoords c = internal::PartOf(grid, part);
  const bool to_nearest = ExpToNearest();
  if (grid.chunks > 1) {
    const internal::SharedLayout layout = internal::MakeSharedLayout(p.num_heads * p.q_len, grid.chunks, p.value_dim);
    return DecodeChunkPart<DecodeK>(p, q, k, v, out, layout, shared, scores, c.head, c.chunk, to_nearest);
  }
  const internal::AttentionRange range{c.head, c.head + 1, c.i_begin, c.i_end};
  if (HWY_UNLIKELY(!to_nearest)) return RowAttention<RowK>(p, q, k, v, out, scores, range);
  RunAttentionPath<DecodeK, RowK>(p, q, k, v, out, scores, range);
}

inline void AttentionFinishForward(const internal::AttentionProblem& p, float* shared, float* out) {
  const size_t chunks = internal::KeyChunks(p.q_len, p.kv_len, p.mask != nullptr);
  if (chunks <= 1) return;
  DecodeFinishChunks(p.num_heads, p.q_len, p.value_dim,
                     internal::MakeSharedLayout(p.num_heads * p.q_len, chunks, p.value_dim), shared, out);
}

// The entry points EDGEATTN_DISPATCH calls, on Highway's kernels; below, on a backend's (the same names in its
// namespace: its DecodeKernels and RowKernels, or Highway's where it supplies none).
inline void AttentionForward(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                             float* out, float* scores) {
  AttentionForwardWith<DecodeKernels, RowKernels>(p, q, k, v, out, scores);
}
inline void AttentionPartForward(const internal::AttentionProblem& p, size_t part, const float* q, const float* k,
                                 const float* v, float* out, float* shared, float* scores) {
  AttentionPartForwardWith<DecodeKernels, RowKernels>(p, part, q, k, v, out, shared, scores);
}
inline void AttentionWeightsForward(const internal::AttentionProblem& p, const float* q, const float* k,
                                    float* weights) {
  internal::AttentionWeightRows<RowKernels>(p, q, k, weights);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#include "lib/common/backend-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace backend {

inline internal::AttentionPath AttentionPathOf(const internal::AttentionProblem& p) {
  return AttentionPathWith<RowKernels>(p);
}
inline void AttentionForward(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                             float* out, float* scores) {
  AttentionForwardWith<DecodeKernels, RowKernels>(p, q, k, v, out, scores);
}
inline void AttentionPartForward(const internal::AttentionProblem& p, size_t part, const float* q, const float* k,
                                 const float* v, float* out, float* shared, float* scores) {
  AttentionPartForwardWith<DecodeKernels, RowKernels>(p, part, q, k, v, out, shared, scores);
}
inline void AttentionWeightsForward(const internal::AttentionProblem& p, const float* q, const float* k,
                                    float* weights) {
  internal::AttentionWeightRows<RowKernels>(p, q, k, weights);
}

}  // namespace backend
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

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
#include "lib/attention/decode-inl.h"
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
// the row path's kernels, RowPathRow; tiled and decode: FallbackRow). No path writes part of `out` and then
// hands the call to another, so `out` may hold anything on entry (it never aliases an input).
//
// The caller's floating-point environment: under a directed rounding mode the exp inside the small, packed_small,
// tiled and decode loops would round its range reduction in that mode (weights up to 270 ULP off); making those
// loops mode-proof costs them in the default environment (lib/softmax/softmax-inl.h, ExpMinusMax). So the mode
// is read once per call (no write to the control register) and such a call runs the row path, whose softmax
// steps its reduction to nearest (attention.h states the bound). AttentionPathForTest reports the shape's
// choice, the path taken to nearest.
inline void AttentionForward(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                             float* out, float* scores) {
  if (HWY_UNLIKELY(!ExpToNearest())) return RowAttention(p, q, k, v, out, scores);
  switch (AttentionPathOf(p)) {
    case internal::AttentionPath::kPackedSmall:
      return PackedSmallAttention(p, q, k, v, out, scores);
    case internal::AttentionPath::kSmall:
      return SmallAttention(p, q, k, v, out, scores);
    case internal::AttentionPath::kTiled:
      return TiledAttention(p, q, k, v, out, scores);
    case internal::AttentionPath::kDecode:
      return DecodeAttention(p, q, k, v, out, scores);
    case internal::AttentionPath::kRow:
      break;
  }
  RowAttention(p, q, k, v, out, scores);
}

inline void AttentionWeightsForward(const internal::AttentionProblem& p, const float* q, const float* k,
                                    float* weights) {
  internal::AttentionWeightRows<RowKernels>(p, q, k, weights);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

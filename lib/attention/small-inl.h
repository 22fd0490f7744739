// SPDX-License-Identifier: Apache-2.0
// The small path (docs/performance.md, small path): every key of a row in one vector.

#if defined(EDGEATTN_LIB_ATTENTION_SMALL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_SMALL_INL_H_
#undef EDGEATTN_LIB_ATTENTION_SMALL_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_SMALL_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/attention/row-inl.h"
#include "lib/common/float_util.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Small path: every key of a row fits in one vector (kv_len <= lanes).
//
// The row path spends a tiny row's time in latency, not arithmetic: the scores go to the workspace and come
// back three times (masked stores do not forward to the loads behind them), and every row reduces its dot
// products one key at a time. Here K^T of the head (head_dim vectors of kv_len lanes, on the stack) is
// copied once per KV head; a query's scores are head_dim FMAs into one vector (queries pre-scaled, as on the
// tiled path), and its softmax runs in that register with the row path's operations (exp with the rounding of
// s - m folded in, double or compensated sum, corrected division). An additive mask is added to the scores as on
// the row path, and P V skips the keys it masks (a NaN in such a key's v never enters the row; its k is
// copied, but its score is replaced by -inf). Rows go two at a time: each row is one chain of dependent
// operations (scores, horizontal max, exp, horizontal sum, division, P V: about 150 cycles), and two independent
// chains side by side overlap (L = 4, d = 8: 206 -> 177 ns; docs/performance.md, step 11). P V takes each
// weight from its lane by a permute instead of a store and reload. The numerics are the row path's, so
// attention.h's bound holds unchanged. A row whose scores hold a NaN or an infinity is computed by the row
// path's kernels instead (RowPathRow: the softmax rules, the row path's bits for that row).
// Stack floats for K^T (head_dim * lanes must fit). Off on the SCALAR and EMU128 targets (microcontrollers: one
// lane, or emulated vectors), whose stack budget (tests/stack_usage) the 1 KiB would break.
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr size_t kSmallKtFloats = 1;
#else
constexpr size_t kSmallKtFloats = 256;
#endif

// lanes: the floats in a vector of this target.
inline bool SmallAttentionApplies(const internal::AttentionProblem& p, size_t lanes) {
  return kSmallKtFloats > 1 && p.kv_len <= lanes && p.head_dim <= kSmallKtFloats / lanes;
}

// The stages of one row of the small path. Scores of query row q_row against K^T (head_dim vectors of N lanes), queries
// pre-scaled.
template <class D>
HWY_INLINE hn::Vec<D> SmallScores(D d, const float* q_row, const float* kt, size_t head_dim, float scale) {
  const size_t N = hn::Lanes(d);
  auto s = hn::Zero(d);
  for (size_t c = 0; c < head_dim; ++c) s = hn::MulAdd(hn::Set(d, q_row[c] * scale), hn::Load(d, kt + c * N), s);
  return s;
}

// The additive mask (a key whose bias is -inf is masked) and the keys past n: -inf. Returns false when no key
// of the row is left (the row is 0).
template <class D>
HWY_INLINE bool SmallMask(D d, const float* mask_row, size_t kv_len, size_t n, hn::Vec<D>& s) {
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  if (mask_row != nullptr) {
    const auto bias = LoadTail(d, mask_row, kv_len);
    const auto masked = hn::Eq(bias, neg_inf);
    if (hn::AllTrue(d, hn::Or(masked, hn::Not(hn::FirstN(d, n))))) return false;
    s = hn::IfThenElse(masked, neg_inf, hn::Add(s, bias));
  }
  s = hn::IfThenElse(hn::FirstN(d, n), s, neg_inf);
  return true;
}

// Softmax weights of a row of scores (the row path's operations); ok becomes false when the scores hold a NaN or
// an infinity (the row is then computed by the row path's kernels).
template <class D>
HWY_INLINE hn::Vec<D> SmallWeights(D d, hn::Vec<D> s, bool& ok) {
  const float m = hn::GetLane(hn::MaxOfLanes(d, s));
  const auto e = ExpMinusMax(d, s, hn::Set(d, -m));
  const RowSumD<D> ds;
  auto acc0 = hn::Zero(ds), acc1 = hn::Zero(ds);
  RowSumAdd(d, e, acc0, acc1);
  const float total = RowSumTotal(d, acc0, acc1);
  ok = ok && internal::IsFinite(m) && total > 0.0f;  // total: NaN among the scores
  const auto vtotal = hn::Set(d, total);
  const auto vinv = hn::Set(d, 1.0f / total);
  const auto quotient = hn::Mul(e, vinv);
  return hn::MulAdd(hn::NegMulAdd(quotient, vtotal, e), vinv, quotient);
}

// out_row = sum over the row's unmasked keys j < n of w_j v_j; w_j is lane j of w (a lane permute: no store of
// the weights and reload of each).
template <class D>
HWY_INLINE void SmallPv(D d, hn::Vec<D> w, size_t n, const float* mask_row, const float* v_head, size_t v_stride,
                        size_t value_dim, float* out_row) {
  const size_t N = hn::Lanes(d);
  const hn::RebindToSigned<D> di;
  for (size_t c = 0; c < value_dim; c += N) {
    const size_t width = value_dim - c < N ? value_dim - c : N;
    auto a = hn::Zero(d);
    for (size_t j = 0; j < n; ++j) {
      if (internal::KeyMasked(mask_row, j)) continue;
      const float* v_row = v_head + j * v_stride + c;
      const auto wj = hn::TableLookupLanes(w, hn::IndicesFromVec(d, hn::Set(di, static_cast<int32_t>(j))));
      a = hn::MulAdd(wj, width == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, width), a);
    }
    if (width == N) {
      hn::StoreU(a, d, out_row + c);
    } else {
      StoreTail(d, a, out_row + c, width);
    }
  }
}

// scores: the workspace (kv_len floats), used only for a row whose scores are not all finite.
// Heads and rows of `range` (rows in pairs from range.i_begin: each row's result is its own, the pairing only
// overlaps two rows' chains).
inline void SmallAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                           float* out, float* scores, const internal::AttentionRange& range) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t q_stride = p.num_heads * p.head_dim;
  const size_t k_stride = p.num_kv_heads * p.head_dim;
  const size_t v_stride = p.num_kv_heads * p.value_dim;
  const size_t out_stride = p.num_heads * p.value_dim;
  HWY_ALIGN float kt[kSmallKtFloats];
  for (size_t g = range.h_begin / group; g * group < range.h_end; ++g) {
    // K^T by scalar copies: on this suite's Xeon a 16-lane gather cost more than the rest of a 4x4 call
    // (microcode-assisted gathers). Padding lanes are 0; their scores are replaced by -inf below.
    for (size_t c = 0; c < p.head_dim; ++c) hn::Store(hn::Zero(d), d, kt + c * N);
    for (size_t j = 0; j < p.kv_len; ++j) {
      const float* k_row = k + j * k_stride + g * p.head_dim;
      for (size_t c = 0; c < p.head_dim; ++c) kt[c * N + j] = k_row[c];
    }
    const float* v_head = v + g * p.value_dim;
    const size_t h_begin = g * group > range.h_begin ? g * group : range.h_begin;
    const size_t h_end = (g + 1) * group < range.h_end ? (g + 1) * group : range.h_end;
    for (size_t h = h_begin; h < h_end; ++h) {
      const auto row = [&](size_t i, float*& out_row, const float*& mask_row, size_t& n, hn::Vec<decltype(d)>& s) {
        n = internal::VisibleKeys(p, i);
        out_row = out + i * out_stride + h * p.value_dim;
        mask_row = p.mask != nullptr ? p.mask + i * p.kv_len : nullptr;
        s = SmallScores(d, q + i * q_stride + h * p.head_dim, kt, p.head_dim, p.scale);
        if (n != 0 && SmallMask(d, mask_row, p.kv_len, n, s)) return true;
        internal::FillRow(out_row, p.value_dim, 0.0f);  // the row sees no key
        return false;
      };
      // Two rows at a time: their chains (scores, max, exp, sum, division, P V) are independent, and side by
      // side in one block the core overlaps them. An odd last row goes alone (its partner's chain runs on zeros
      // and is discarded).
      for (size_t i = range.i_begin; i < range.i_end; i += 2) {
        float *out0, *out1 = nullptr;
        const float *mask0, *mask1 = nullptr;
        size_t n0, n1 = 0;
        hn::Vec<decltype(d)> s0, s1 = hn::Zero(d);
        const bool live0 = row(i, out0, mask0, n0, s0);
        const bool live1 = i + 1 < range.i_end && row(i + 1, out1, mask1, n1, s1);
        bool ok0 = true, ok1 = true;
        const auto w0 = SmallWeights(d, s0, ok0);
        const auto w1 = SmallWeights(d, s1, ok1);
        // A row with a NaN or an infinity among its scores follows the softmax rules: the row path computes it.
        if (live0) {
          if (ok0) {
            SmallPv(d, w0, n0, mask0, v_head, v_stride, p.value_dim, out0);
          } else {
            RowPathRow(p, q, k, v, out, scores, i, h);
          }
        }
        if (live1) {
          if (ok1) {
            SmallPv(d, w1, n1, mask1, v_head, v_stride, p.value_dim, out1);
          } else {
            RowPathRow(p, q, k, v, out, scores, i + 1, h);
          }
        }
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

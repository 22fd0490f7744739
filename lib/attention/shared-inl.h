// SPDX-License-Identifier: Apache-2.0
// Pieces the attention paths share (docs/performance.md, The attention paths): the view of one head, the
// row fallback for non-finite scores, the online softmax's P V row and division, the pairwise-sum tree.

#if defined(EDGEATTN_LIB_ATTENTION_SHARED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_SHARED_INL_H_
#undef EDGEATTN_LIB_ATTENTION_SHARED_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_SHARED_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/common/float_util.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/dot/dot-inl.h"
#include "lib/exp/exp_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One head of a problem as the tiled and decode paths walk it: pointers at head h's query and output columns
// and at its KV head's key and value columns, the strides between rows, and the tiled path's scratch in the
// workspace (unused by the decode path).
struct HeadView {
  const internal::AttentionProblem* p;
  const float* q;  // query head h of row 0
  const float* k;  // kv head g of key 0
  const float* v;
  float* out;  // query head h of row 0
  size_t q_stride, k_stride, v_stride, out_stride;
  size_t key_tile;
  float* qt;     // [head_dim][QB]
  float* pt;     // [key_tile][QB]
  float* alpha;  // [QB] per tile: e^(m_old - m_new) of each query lane
  float* lsum;   // [QB] the online softmax's sum l of each query lane, stored for the block's end
  // Second meanings of the same slots, at times when the first is dead:
  float* visible;    // = lsum, while a block starts: the visible-key count of each query lane
  float* bad_flags;  // = alpha, when a block ends: 1 for a lane whose scores met a NaN or +inf, else 0
};

// Row i of a block whose scores were not all finite (or -inf): recomputed key by key without workspace,
// with the rules of the row path (softmax.h): a NaN score makes the row NaN, +inf scores share the row.
inline void FallbackRow(const HeadView& t, size_t i) {
  const internal::AttentionProblem& p = *t.p;
  const hn::ScalableTag<float> d;
  const size_t n = internal::VisibleKeys(p, i);
  const float* q_row = t.q + i * t.q_stride;
  float* out_row = t.out + i * t.out_stride;
  float m = -internal::kInfinity;
  size_t num_pos_inf = 0;
  bool has_nan = false;
  for (size_t j = 0; j < n; ++j) {
    const float s = Dot(d, q_row, t.k + j * t.k_stride, p.head_dim) * p.scale;
    has_nan |= s != s;
    num_pos_inf += s == internal::kInfinity ? 1 : 0;
    m = s > m ? s : m;
  }
  if (has_nan) return internal::FillRow(out_row, p.value_dim, internal::kQuietNaN);
  const bool all_minus_inf = num_pos_inf == 0 && !(m > -internal::kInfinity);  // every weight is 0
  float total = 0.0f;
  if (num_pos_inf == 0 && !all_minus_inf) {
    for (size_t j = 0; j < n; ++j) {
      const float x = Dot(d, q_row, t.k + j * t.k_stride, p.head_dim) * p.scale;
      total += internal::ExpRr2P6Shifted(x - m, internal::TwoSumError(x, -m, x - m));
    }
  }
  internal::FillRow(out_row, p.value_dim, 0.0f);
  for (size_t j = 0; j < n; ++j) {
    const float x = Dot(d, q_row, t.k + j * t.k_stride, p.head_dim) * p.scale;
    const float w = all_minus_inf      ? 0.0f
                    : num_pos_inf != 0 ? (x == internal::kInfinity ? 1.0f / static_cast<float>(num_pos_inf) : 0.0f)
                                       : internal::ExpRr2P6Shifted(x - m, internal::TwoSumError(x, -m, x - m)) / total;
    const float* v_row = t.v + j * t.v_stride;
    for (size_t c = 0; c < p.value_dim; ++c) out_row[c] += w * v_row[c];
  }
}

// x / l for the online softmax's sum l >= 1 (see DivideRow): vl = l, vinv = 1/l in every lane.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V DivideVec(D d, V x, V vl, V vinv) {
  (void)d;
#if HWY_NATIVE_FMA
  const V q = hn::Mul(x, vinv);
  return hn::MulAdd(hn::NegMulAdd(q, vl, x), vinv, q);
#else
  (void)vinv;
  return hn::Div(x, vl);
#endif
}

// out_row[c] = out_row[c] * alpha + sum_{j in [j_begin, j_end)} w_j v_j[c] for c in [0, width), where
// w_j = w[(j - j0) * qb]. With rescale false, out_row[c] += the sum instead; with overwrite, out_row[c] = the
// sum (out_row is not read: a block's first tile).
template <class D>
HWY_INLINE void PvRow(D d, const float* w, size_t qb, size_t j0, size_t j_begin, size_t j_end, const float* v,
                      size_t v_stride, float* out_row, size_t width, float alpha, bool rescale,
                      bool overwrite = false) {
  const size_t N = hn::Lanes(d);
  const auto va = hn::Set(d, alpha);
  for (size_t c = 0; c < width; c += N) {
    const size_t lanes = width - c < N ? width - c : N;
    auto acc = hn::Zero(d);
    for (size_t j = j_begin; j < j_end; ++j) {
      const float* v_row = v + j * v_stride + c;
      acc = hn::MulAdd(hn::Set(d, w[(j - j0) * qb]), lanes == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, lanes), acc);
    }
    const auto old = overwrite ? acc : lanes == N ? hn::LoadU(d, out_row + c) : LoadTail(d, out_row + c, lanes);
    const auto sum = overwrite ? acc : rescale ? hn::MulAdd(old, va, acc) : hn::Add(old, acc);
    if (lanes == N) {
      hn::StoreU(sum, d, out_row + c);
    } else {
      StoreTail(d, sum, out_row + c, lanes);
    }
  }
}

// out_row[c] /= l for c < width, 1 <= l < 2^24 (the online softmax's sum: the key at the running max adds
// e^0). With FMA: one reciprocal per row and, per vector, q = x (1/l) corrected once, q += (x - q l) (1/l),
// the residual exact (Markstein's correction step: the result is x / l correctly rounded; 0 differences from
// a division in 2e8 random pairs with 1 <= l < 2^24). A vector division costs 10-16 cycles per vector on
// AVX-512 cores: 14% of an L = 16 call (docs/performance.md, step 9). Without FMA the residual is not exact:
// those targets divide.
template <class D>
HWY_INLINE void DivideRow(D d, float* out_row, size_t width, float l) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // A narrow row (d = 8 on 16 lanes) on half vectors: its P·V stored it with one half-vector store, from which a
  // masked full-vector load is not forwarded (a stall per row: 7% of a d = 8 KV cache call). The same quotients.
  if constexpr (hn::MaxLanes(D()) >= 16) {
    if (2 * width <= hn::Lanes(d)) return DivideRow(hn::Half<D>(), out_row, width, l);
  }
#endif
  const size_t N = hn::Lanes(d);
  const auto vl = hn::Set(d, l), vinv = hn::Set(d, 1.0f / l);
  for (size_t c = 0; c < width; c += N) {
    const size_t lanes = width - c < N ? width - c : N;
    const auto x = lanes == N ? hn::LoadU(d, out_row + c) : LoadTail(d, out_row + c, lanes);
    const auto quotient = DivideVec(d, x, vl, vinv);
    if (lanes == N) {
      hn::StoreU(quotient, d, out_row + c);
    } else {
      StoreTail(d, quotient, out_row + c, lanes);
    }
  }
}

#if HWY_TARGET != HWY_SCALAR
// Pairwise sums of neighbouring lanes: the lower half of the result holds a's, the upper half b's.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V PairSums(D d, V a, V b) {
  return hn::Add(hn::ConcatEven(d, b, a), hn::ConcatOdd(d, b, a));
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// SPDX-License-Identifier: Apache-2.0
// The packed_small path (docs/performance.md, packed_small path): the scores of several rows of at most 4 keys
// in one vector (x86 AVX2 and AVX-512).

#if defined(EDGEATTN_LIB_ATTENTION_PACKED_SMALL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_PACKED_SMALL_INL_H_
#undef EDGEATTN_LIB_ATTENTION_PACKED_SMALL_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_PACKED_SMALL_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/attention/row-inl.h"
#include "lib/attention/shared-inl.h"
#include "lib/common/float_util.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Packed small path (x86 AVX2 and AVX-512): at most 4 keys, no additive mask. One vector holds the scores
// of N/4 query rows (lane 4r + j: row i0 + r of the block, key j), so the softmax of four rows (AVX-512; two on
// AVX2) is one chain of vector operations instead of one chain per row (each about 150 cycles, of which the
// horizontal max, sum and per-row exp are most). The scores are N dot products reduced together by the
// transposing PairSums tree (no K^T to copy: the copy's scalar stores, reloaded as vectors, stalled
// store-to-load forwarding); the group max and the group sums are butterflies inside each group of four lanes
// (the sums in double, as on the row path); exp with the rounding of s - m folded in and the corrected
// division are the row path's. P V takes each weight from its lane by a permute. The numerics are the row
// path's (the scores' summation order differs, within sigma's (head_dim + 2)u), so attention.h's bound holds.
// The rows of a block whose scores hold a NaN or an infinity are computed by the row path's kernels instead
// (RowPathRow: the softmax rules). A causal call whose first row sees no key is not taken (ChooseAttentionPath).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
constexpr bool kPackedSmall = true;
#else
constexpr bool kPackedSmall = false;
#endif

// Causal with kv_len < q_len, the first row sees no key: the group max below assumes every row sees key 0.
inline bool PackedSmallApplies(const internal::AttentionProblem& p) {
  return kPackedSmall && p.kv_len <= 4 && p.mask == nullptr && !(p.causal && p.kv_len < p.q_len);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// One head of the problem: q, k, v and out at head h's columns (k and v at its KV head's), and the row strides.
struct PackedSmallHead {
  const internal::AttentionProblem* p;
  const float *q, *k, *v;
  float* out;
  size_t q_stride, k_stride, v_stride, out_stride;
};

// Step 1, the scores of rows [i0, i0 + rows) in one vector, unscaled: lane 4r + j = q_{i0+r} . k_j (rows past
// q_len and keys past kv_len give 0). N dot products, then the PairSums tree reduces their N partial-sum vectors
// to one (PairSums keeps the order of its inputs).
template <class D>
HWY_INLINE hn::Vec<D> PackedSmallScores(D d, const PackedSmallHead& t, size_t i0, size_t rows) {
  const internal::AttentionProblem& p = *t.p;
  const hn::Half<D> dh;
  using V = hn::Vec<D>;
  constexpr size_t N = hn::MaxLanes(d);
  constexpr size_t R = N / 4;
  V acc[N];
  size_t inputs = N;
  if (2 * p.head_dim <= N) {
    // Narrow heads: two dot products per vector, [q_r | q_r] * [k_2u | k_2u+1] (lower | upper half): N/2
    // vectors and one level less of the tree, which leaves input t's two sums in lanes 2t and 2t + 1, that
    // is lane 4r + j for t = 2r + u, j = 2u or 2u + 1.
    inputs = N / 2;
    hn::Vec<decltype(dh)> kh[4];
    for (size_t j = 0; j < 4; ++j) {
      kh[j] = j >= p.kv_len ? hn::Zero(dh) : LoadTail(dh, t.k + j * t.k_stride, p.head_dim);
    }
    const V k01 = hn::Combine(d, kh[1], kh[0]), k23 = hn::Combine(d, kh[3], kh[2]);
    for (size_t r = 0; r < R; ++r) {
      const auto qh = r >= rows ? hn::Zero(dh) : LoadTail(dh, t.q + (i0 + r) * t.q_stride, p.head_dim);
      const V q2 = hn::Combine(d, qh, qh);
      acc[2 * r] = hn::Mul(q2, k01);
      acc[2 * r + 1] = hn::Mul(q2, k23);
    }
  } else {
    for (size_t x = 0; x < N; ++x) acc[x] = hn::Zero(d);
  }
  for (size_t c = 0; inputs == N && c < p.head_dim; c += N) {
    const size_t width = p.head_dim - c < N ? p.head_dim - c : N;
    V kc[4], qc[R];
    for (size_t j = 0; j < 4; ++j) {
      const float* k_row = t.k + j * t.k_stride + c;
      kc[j] = j >= p.kv_len ? hn::Zero(d) : width == N ? hn::LoadU(d, k_row) : LoadTail(d, k_row, width);
    }
    for (size_t r = 0; r < R; ++r) {
      const float* q_row = t.q + (i0 + r) * t.q_stride + c;
      qc[r] = r >= rows ? hn::Zero(d) : width == N ? hn::LoadU(d, q_row) : LoadTail(d, q_row, width);
    }
    for (size_t r = 0; r < R; ++r) {
      for (size_t j = 0; j < 4; ++j) acc[4 * r + j] = hn::MulAdd(qc[r], kc[j], acc[4 * r + j]);
    }
  }
  for (size_t n = inputs; n > 1; n /= 2) {
    for (size_t x = 0; x < n / 2; ++x) acc[x] = PairSums(d, acc[2 * x], acc[2 * x + 1]);
  }
  return acc[0];
}

// Step 2, the softmax of each group of four lanes of s (finite where valid; every row sees key 0): the group max
// by two shuffles, exp with the rounding of s - m folded in, the group sums in double, the corrected division.
template <class D, class M>
HWY_INLINE hn::Vec<D> PackedSmallWeights(D d, hn::Vec<D> s, M valid) {
  const hn::Half<D> dh;
  const hn::Repartition<double, D> dd;  // N/2 doubles
  using V = hn::Vec<D>;
  s = hn::IfThenElse(valid, s, hn::Set(d, -internal::kInfinity));
  auto m = hn::Max(s, hn::Shuffle2301(s));
  m = hn::Max(m, hn::Shuffle1032(m));
  const V e = ExpMinusMax(d, s, hn::Neg(m));  // masked lanes: e^-inf = 0
  // Lanes 4r..4r+3 of e are the four doubles of a 256-bit half.
  auto lo = hn::PromoteTo(dd, hn::LowerHalf(dh, e));
  auto hi = hn::PromoteTo(dd, hn::UpperHalf(dh, e));
  lo = hn::Add(lo, hn::Shuffle01(lo));
  hi = hn::Add(hi, hn::Shuffle01(hi));
  lo = hn::Add(lo, hn::SwapAdjacentBlocks(lo));
  hi = hn::Add(hi, hn::SwapAdjacentBlocks(hi));
  const V total = hn::Combine(d, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
  const V inv = hn::Div(hn::Set(d, 1.0f), total);
  const V quotient = hn::Mul(e, inv);
  return hn::MulAdd(hn::NegMulAdd(quotient, total, e), inv, quotient);
}

// Step 3 for narrow rows (value_dim <= N/2): two rows per vector, [row r | row r+1] += [w_rj | w_r+1,j] *
// [v_j | v_j]; a key that only row r + 1 sees (causal) enters as [0 | v_j], so that a NaN in the v of a key row
// r does not see never reaches row r (its weight there is 0, but 0 * NaN is not).
template <class D>
HWY_INLINE void PackedSmallPvNarrow(D d, const PackedSmallHead& t, hn::Vec<D> w, size_t i0, size_t rows) {
  const internal::AttentionProblem& p = *t.p;
  const hn::RebindToSigned<D> di;
  const hn::Half<D> dh;
  constexpr size_t N = hn::MaxLanes(d);
  const auto upper_row = hn::IfThenZeroElse(hn::FirstN(di, N / 2), hn::Set(di, 4));  // +4 in the upper half
  const size_t n_block = internal::VisibleKeys(p, i0 + rows - 1);                    // rows further down see more keys
  hn::Vec<decltype(dh)> vh[4];
  for (size_t j = 0; j < n_block; ++j) vh[j] = LoadTail(dh, t.v + j * t.v_stride, p.value_dim);
  for (size_t r = 0; r < rows; r += 2) {
    const bool pair = r + 1 < rows;
    const size_t n_lo = internal::VisibleKeys(p, i0 + r);
    const size_t n_hi = pair ? internal::VisibleKeys(p, i0 + r + 1) : n_lo;
    auto a = hn::Zero(d);
    for (size_t j = 0; j < n_hi; ++j) {
      const auto idx = hn::Add(hn::Set(di, static_cast<int32_t>(4 * r + j)), upper_row);
      const auto wv = hn::TableLookupLanes(w, hn::IndicesFromVec(d, idx));
      a = hn::MulAdd(wv, hn::Combine(d, vh[j], j < n_lo ? vh[j] : hn::Zero(dh)), a);
    }
    float* out_row = t.out + (i0 + r) * t.out_stride;
    StoreTail(dh, hn::LowerHalf(dh, a), out_row, p.value_dim);
    if (pair) StoreTail(dh, hn::UpperHalf(dh, a), out_row + t.out_stride, p.value_dim);
  }
}

// Step 3 for wider rows: one row at a time, its weights taken from their lanes once.
template <class D>
HWY_INLINE void PackedSmallPvWide(D d, const PackedSmallHead& t, hn::Vec<D> w, size_t i0, size_t rows) {
  const internal::AttentionProblem& p = *t.p;
  const hn::RebindToSigned<D> di;
  constexpr size_t N = hn::MaxLanes(d);
  for (size_t r = 0; r < rows; ++r) {
    const size_t n = internal::VisibleKeys(p, i0 + r);
    float* out_row = t.out + (i0 + r) * t.out_stride;
    hn::Vec<D> wj[4];
    for (size_t j = 0; j < n; ++j) {
      wj[j] = hn::TableLookupLanes(w, hn::IndicesFromVec(d, hn::Set(di, static_cast<int32_t>(4 * r + j))));
    }
    for (size_t c = 0; c < p.value_dim; c += N) {
      const size_t width = p.value_dim - c < N ? p.value_dim - c : N;
      auto a = hn::Zero(d);
      for (size_t j = 0; j < n; ++j) {
        const float* v_row = t.v + j * t.v_stride + c;
        a = hn::MulAdd(wj[j], width == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, width), a);
      }
      if (width == N) {
        hn::StoreU(a, d, out_row + c);
      } else {
        StoreTail(d, a, out_row + c, width);
      }
    }
  }
}

// scores: the workspace (kv_len floats), used only for the rows of a block whose scores are not all finite.
// Heads and rows of `range` (range.i_begin a multiple of R: 0, or of kAttentionRowBlock).
inline void PackedSmallAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                                 float* out, float* scores, const internal::AttentionRange& range) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  constexpr size_t N = hn::MaxLanes(d);  // 8 or 16: two or four rows per vector
  constexpr size_t R = N / 4;
  const size_t group = p.num_heads / p.num_kv_heads;
  PackedSmallHead t;
  t.p = &p;
  t.q_stride = p.num_heads * p.head_dim;
  t.k_stride = p.num_kv_heads * p.head_dim;
  t.v_stride = p.num_kv_heads * p.value_dim;
  t.out_stride = p.num_heads * p.value_dim;
  // Lane 4r + j: key j = lane & 3, row r = lane >> 2. Causal: key j visible to row i0 + r iff
  // j - r <= i0 + kv_len - q_len (bottom-right aligned); j - r lies in [-3, 3], so the offset is clamped to [-4, 4].
  const auto lane = hn::Iota(di, 0);
  const auto key = hn::And(lane, hn::Set(di, 3));
  const auto key_minus_row = hn::Sub(key, hn::ShiftRight<2>(lane));
  const auto key_exists = hn::RebindMask(d, hn::Lt(key, hn::Set(di, static_cast<int32_t>(p.kv_len))));
  const auto inf = hn::Set(d, internal::kInfinity);
  const auto vscale = hn::Set(d, p.scale);
  static_assert(kAttentionRowBlock % R == 0, "a part's rows start at a block of R rows");
  for (size_t h = range.h_begin; h < range.h_end; ++h) {
    const size_t g = h / group;
    t.q = q + h * p.head_dim;
    t.k = k + g * p.head_dim;
    t.v = v + g * p.value_dim;
    t.out = out + h * p.value_dim;
    for (size_t i0 = range.i_begin; i0 < range.i_end; i0 += R) {
      const size_t rows = range.i_end - i0 < R ? range.i_end - i0 : R;
      const auto s = hn::Mul(PackedSmallScores(d, t, i0, rows), vscale);
      auto valid = key_exists;
      if (p.causal) {
        const int64_t offset = static_cast<int64_t>(i0 + p.kv_len) - static_cast<int64_t>(p.q_len);
        const int32_t limit = static_cast<int32_t>(offset < -4 ? -4 : offset > 4 ? 4 : offset) + 1;
        valid = hn::And(valid, hn::RebindMask(d, hn::Lt(key_minus_row, hn::Set(di, limit))));
      }
      if (!hn::AllTrue(d, hn::Or(hn::Not(valid), hn::Lt(hn::Abs(s), inf)))) {  // NaN or inf: the softmax rules
        for (size_t r = 0; r < rows; ++r) RowPathRow(p, q, k, v, out, scores, i0 + r, h);
        continue;
      }
      const auto w = PackedSmallWeights(d, s, valid);
      if (2 * p.value_dim <= N) {
        PackedSmallPvNarrow(d, t, w, i0, rows);
      } else {
        PackedSmallPvWide(d, t, w, i0, rows);
      }
    }
  }
}
#else
inline void PackedSmallAttention(const internal::AttentionProblem&, const float*, const float*, const float*, float*,
                                 float*, const internal::AttentionRange&) {}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

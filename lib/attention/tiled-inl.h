// SPDX-License-Identifier: Apache-2.0
// The tiled path (docs/performance.md, tiled path): blocks of queries against tiles of keys.

#if defined(EDGEATTN_LIB_ATTENTION_TILED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_TILED_INL_H_
#undef EDGEATTN_LIB_ATTENTION_TILED_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_TILED_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/attention/shared-inl.h"
#include "lib/attention/tiled_transpose-inl.h"
#include "lib/common/float_util.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---------------------------------------------------------------------------------------------------------
// Tiled path (no additive mask, q_len >= kAttentionTiledMinQueries): a block of up to 2 vectors of queries
// against tiles of up to 64 keys.
//
// Scores are computed transposed: lane r of a vector is query i0 + r, so Q^T of the block is packed once (the
// queries pre-multiplied by scale) and each key's elements are broadcast. Four keys by two query vectors keep
// eight accumulators in registers with no horizontal reduction; the causal mask, the row maxima and the online
// softmax's running max m and sum l are all lane-wise. The tile's weights p = e^(s - m) go to the workspace
// (Q^T and p: O(block x (head_dim + tile)) floats, independent of L), and P V accumulates into the output rows,
// four rows by four vectors of columns per pass: each row's earlier sum is rescaled by e^(m_old - m_new) in
// the same instruction that adds the tile. After the last tile the rows are divided by l. Key tiles past the
// block's last visible key (causal) are never touched; keys a row does not see are never multiplied into it.
// A row whose scores hold a NaN or +inf is recomputed by FallbackRow, which follows the softmax rules.
using TiledTag = hn::CappedTag<float, 16>;  // at most 16 lanes: the workspace formula assumes blocks <= 32

// The workspace formula (attention.h: TiledFloats) reserves TiledQueries(q_len) x (head_dim + TiledKeys(kv_len) + 2)
// floats; a block uses qb x (head_dim + key_tile + 2) with key_tile = TiledKeys(kv_len) (TiledAttention) and
// qb = N lanes for q_len <= N, else 2N. TiledQueries does not decrease with q_len, so qb <= TiledQueries(q_len)
// for every q_len when it holds for q_len = 1 (one vector) and q_len = N + 1 (the first with two).
constexpr size_t kTiledMaxLanes = hn::MaxLanes(TiledTag());
static_assert(kTiledMaxLanes <= internal::TiledQueries(1) &&
                  2 * kTiledMaxLanes <= internal::TiledQueries(kTiledMaxLanes + 1),
              "a tiled block must fit the workspace attention.h's AttentionWorkspaceBytes reserves");

// Stores four vectors of a tile's P V sums, x0..x3, into row r of the block (output row `row`, columns from c):
// added to the row's earlier sum rescaled by t.alpha[r] unless first, divided by its l (t.lsum[r]) if divide.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE void TiledPvStore(D d, const HeadView& t, size_t r, size_t row, size_t c, bool first, bool divide, V x0,
                             V x1, V x2, V x3) {
  const size_t N = hn::Lanes(d);
  float* o = t.out + row * t.out_stride + c;
  if (!first) {
    const auto al = hn::Set(d, t.alpha[r]);
    x0 = hn::MulAdd(hn::LoadU(d, o), al, x0), x1 = hn::MulAdd(hn::LoadU(d, o + N), al, x1);
    x2 = hn::MulAdd(hn::LoadU(d, o + 2 * N), al, x2);
    x3 = hn::MulAdd(hn::LoadU(d, o + 3 * N), al, x3);
  }
  const float l = t.lsum[r];
  if (divide && l != 0.0f) {
    const auto vl = hn::Set(d, l), vinv = hn::Set(d, 1.0f / l);
    x0 = DivideVec(d, x0, vl, vinv), x1 = DivideVec(d, x1, vl, vinv);
    x2 = DivideVec(d, x2, vl, vinv), x3 = DivideVec(d, x3, vl, vinv);
  }
  hn::StoreU(x0, d, o), hn::StoreU(x1, d, o + N), hn::StoreU(x2, d, o + 2 * N);
  hn::StoreU(x3, d, o + 3 * N);
}

// Four rows (r0..r0+3 of the block) by four vectors of columns starting at c, keys [j0, j_end) of the tile.
// first: the block's first tile (the rows are written, not read); divide: the last tile, and these four rows
// see no other keys of it: the rows are divided by their l (t.lsum) as they are stored.
template <class D>
HWY_INLINE void TiledPv4x4(D d, const HeadView& t, size_t qb, size_t r0, size_t row0, size_t c, size_t j0, size_t j_end,
                           bool first, bool divide) {
  const size_t N = hn::Lanes(d);
  auto a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
  auto a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
  auto a20 = hn::Zero(d), a21 = hn::Zero(d), a22 = hn::Zero(d), a23 = hn::Zero(d);
  auto a30 = hn::Zero(d), a31 = hn::Zero(d), a32 = hn::Zero(d), a33 = hn::Zero(d);
  const float* w = t.pt + r0;
  for (size_t j = j0; j < j_end; ++j) {
    const float* v_row = t.v + j * t.v_stride + c;
    const float* wj = w + (j - j0) * qb;
    const auto v0 = hn::LoadU(d, v_row), v1 = hn::LoadU(d, v_row + N), v2 = hn::LoadU(d, v_row + 2 * N),
               v3 = hn::LoadU(d, v_row + 3 * N);
    const auto w0 = hn::Set(d, wj[0]), w1 = hn::Set(d, wj[1]), w2 = hn::Set(d, wj[2]), w3 = hn::Set(d, wj[3]);
    a00 = hn::MulAdd(w0, v0, a00), a01 = hn::MulAdd(w0, v1, a01), a02 = hn::MulAdd(w0, v2, a02);
    a03 = hn::MulAdd(w0, v3, a03);
    a10 = hn::MulAdd(w1, v0, a10), a11 = hn::MulAdd(w1, v1, a11), a12 = hn::MulAdd(w1, v2, a12);
    a13 = hn::MulAdd(w1, v3, a13);
    a20 = hn::MulAdd(w2, v0, a20), a21 = hn::MulAdd(w2, v1, a21), a22 = hn::MulAdd(w2, v2, a22);
    a23 = hn::MulAdd(w2, v3, a23);
    a30 = hn::MulAdd(w3, v0, a30), a31 = hn::MulAdd(w3, v1, a31), a32 = hn::MulAdd(w3, v2, a32);
    a33 = hn::MulAdd(w3, v3, a33);
  }
  TiledPvStore(d, t, r0, row0, c, first, divide, a00, a01, a02, a03);
  TiledPvStore(d, t, r0 + 1, row0 + 1, c, first, divide, a10, a11, a12, a13);
  TiledPvStore(d, t, r0 + 2, row0 + 2, c, first, divide, a20, a21, a22, a23);
  TiledPvStore(d, t, r0 + 3, row0 + 3, c, first, divide, a30, a31, a32, a33);
}

// Causal mask, NaN/+inf detection, tile max and store of one vector of scores (key j, query lanes of vis).
template <class D, class V, class VI, class M>
HWY_INLINE void TiledFinishScore(D d, V s, size_t j, VI vis, float* dst, V& tile_max, M& bad) {
  const hn::RebindToSigned<D> di;
  const auto seen = hn::RebindMask(d, hn::Lt(hn::Set(di, static_cast<int32_t>(j)), vis));
  s = hn::IfThenElse(seen, s, hn::Set(d, -internal::kInfinity));
  bad = hn::Or(bad, hn::Not(hn::Lt(s, hn::Set(d, internal::kInfinity))));
  tile_max = hn::Max(tile_max, s);
  hn::StoreU(s, d, dst);
}

// Online-softmax update of one query vector after a tile of n scores: p = e^(s - m_new) in place, returns
// alpha = e^(m_old - m_new); m and l updated. A lane that has seen no key yet keeps m = -inf and p = 0.
template <class D, class V>
HWY_INLINE V TiledSoftmaxUpdate(D d, float* pt, size_t qb, size_t n, V tile_max, V& m, V& l) {
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  const V m_new = hn::Max(m, tile_max);
  const V neg_ref = hn::Neg(hn::IfThenZeroElse(hn::Eq(m_new, neg_inf), m_new));
  const V alpha = ExpMinusMax(d, m, neg_ref);
  V sum0 = hn::Zero(d), sum1 = hn::Zero(d);
  size_t j = 0;
  for (; j + 2 <= n; j += 2) {
    const V p0 = ExpMinusMax(d, hn::LoadU(d, pt + j * qb), neg_ref);
    const V p1 = ExpMinusMax(d, hn::LoadU(d, pt + (j + 1) * qb), neg_ref);
    hn::StoreU(p0, d, pt + j * qb);
    hn::StoreU(p1, d, pt + (j + 1) * qb);
    sum0 = hn::Add(sum0, p0);
    sum1 = hn::Add(sum1, p1);
  }
  if (j < n) {
    const V p0 = ExpMinusMax(d, hn::LoadU(d, pt + j * qb), neg_ref);
    hn::StoreU(p0, d, pt + j * qb);
    sum0 = hn::Add(sum0, p0);
  }
  m = m_new;
  l = hn::MulAdd(l, alpha, hn::Add(sum0, sum1));
  return alpha;
}

// Step 1 of a block: Q^T of the block, scaled, into t.qt (padding lanes 0), and each lane's visible-key count
// into t.visible (0 for padding lanes).
template <class D>
HWY_INLINE void TiledPackQueries(D d, const HeadView& t, size_t i0, size_t nb, size_t qb) {
  const internal::AttentionProblem& p = *t.p;
  const size_t N = hn::Lanes(d);
  const size_t head_dim = p.head_dim;
  const bool squares = kTiledTranspose && nb == qb && hn::Lanes(d) == hn::Lanes(hn::ScalableTag<float>());
  const size_t c_squares = squares ? head_dim - head_dim % N : 0;  // columns packed by TransposeScaledSquares
  if (squares) TransposeScaledSquares(d, t.q + i0 * t.q_stride, t.q_stride, nb, c_squares, p.scale, t.qt, qb);
  for (size_t r = 0; r < qb; ++r) {
    if (r < nb) {
      const float* q_row = t.q + (i0 + r) * t.q_stride;
      for (size_t c = c_squares; c < head_dim; ++c) t.qt[c * qb + r] = q_row[c] * p.scale;
    } else {
      for (size_t c = 0; c < head_dim; ++c) t.qt[c * qb + r] = 0.0f;
    }
    t.visible[r] = r < nb ? static_cast<float>(internal::VisibleKeys(p, i0 + r)) : 0.0f;  // exact: kv_len < 2^24
  }
}

// Step 2, the score loop: kKeys (8, 4 or 1) keys from key j against one (kTwo: two) query vectors, kKeys FMA
// chains per query vector, then masked, checked and stored into the tile's scores (TiledFinishScore). Eight keys
// keep eight chains for one query vector, sixteen for two (fewer leave the FMA units idle whenever one chain waits
// on a load; docs/performance.md, steps 4 and 9). Named accumulators, not arrays: SVE and RVV vectors cannot
// form arrays, and for kKeys < 8 the unused ones are dead code.
template <size_t kKeys, bool kTwo, class D, class VI, class M>
HWY_INLINE void TiledScoreKeys(D d, const HeadView& t, size_t qb, size_t j0, size_t j, VI vis0, VI vis1,
                               hn::Vec<D>& tmax0, hn::Vec<D>& tmax1, M& bad) {
  static_assert(kKeys == 1 || kKeys == 4 || kKeys == 8, "the score loop runs 8, 4 or 1 keys");
  const size_t N = hn::Lanes(d);
  const float* k0 = t.k + j * t.k_stride;
  const size_t ks = t.k_stride;
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);  // query vector 0
  auto s4 = hn::Zero(d), s5 = hn::Zero(d), s6 = hn::Zero(d), s7 = hn::Zero(d);
  auto u0 = hn::Zero(d), u1 = hn::Zero(d), u2 = hn::Zero(d), u3 = hn::Zero(d);  // query vector 1
  auto u4 = hn::Zero(d), u5 = hn::Zero(d), u6 = hn::Zero(d), u7 = hn::Zero(d);
  for (size_t c = 0; c < t.p->head_dim; ++c) {
    const auto q0 = hn::LoadU(d, t.qt + c * qb);
    const auto q1 = kTwo ? hn::LoadU(d, t.qt + c * qb + N) : q0;
    const auto b0 = hn::Set(d, k0[c]);
    s0 = hn::MulAdd(q0, b0, s0);
    if constexpr (kTwo) u0 = hn::MulAdd(q1, b0, u0);
    if constexpr (kKeys >= 4) {
      const auto b1 = hn::Set(d, k0[ks + c]), b2 = hn::Set(d, k0[2 * ks + c]), b3 = hn::Set(d, k0[3 * ks + c]);
      s1 = hn::MulAdd(q0, b1, s1), s2 = hn::MulAdd(q0, b2, s2), s3 = hn::MulAdd(q0, b3, s3);
      if constexpr (kTwo) u1 = hn::MulAdd(q1, b1, u1), u2 = hn::MulAdd(q1, b2, u2), u3 = hn::MulAdd(q1, b3, u3);
    }
    if constexpr (kKeys == 8) {
      const auto b4 = hn::Set(d, k0[4 * ks + c]), b5 = hn::Set(d, k0[5 * ks + c]);
      const auto b6 = hn::Set(d, k0[6 * ks + c]), b7 = hn::Set(d, k0[7 * ks + c]);
      s4 = hn::MulAdd(q0, b4, s4), s5 = hn::MulAdd(q0, b5, s5), s6 = hn::MulAdd(q0, b6, s6);
      s7 = hn::MulAdd(q0, b7, s7);
      if constexpr (kTwo) {
        u4 = hn::MulAdd(q1, b4, u4), u5 = hn::MulAdd(q1, b5, u5), u6 = hn::MulAdd(q1, b6, u6);
        u7 = hn::MulAdd(q1, b7, u7);
      }
    }
  }
  float* dst = t.pt + (j - j0) * qb;
  TiledFinishScore(d, s0, j, vis0, dst, tmax0, bad);
  if constexpr (kKeys >= 4) {
    TiledFinishScore(d, s1, j + 1, vis0, dst + qb, tmax0, bad);
    TiledFinishScore(d, s2, j + 2, vis0, dst + 2 * qb, tmax0, bad);
    TiledFinishScore(d, s3, j + 3, vis0, dst + 3 * qb, tmax0, bad);
  }
  if constexpr (kKeys == 8) {
    TiledFinishScore(d, s4, j + 4, vis0, dst + 4 * qb, tmax0, bad);
    TiledFinishScore(d, s5, j + 5, vis0, dst + 5 * qb, tmax0, bad);
    TiledFinishScore(d, s6, j + 6, vis0, dst + 6 * qb, tmax0, bad);
    TiledFinishScore(d, s7, j + 7, vis0, dst + 7 * qb, tmax0, bad);
  }
  if constexpr (kTwo) {
    TiledFinishScore(d, u0, j, vis1, dst + N, tmax1, bad);
    if constexpr (kKeys >= 4) {
      TiledFinishScore(d, u1, j + 1, vis1, dst + qb + N, tmax1, bad);
      TiledFinishScore(d, u2, j + 2, vis1, dst + 2 * qb + N, tmax1, bad);
      TiledFinishScore(d, u3, j + 3, vis1, dst + 3 * qb + N, tmax1, bad);
    }
    if constexpr (kKeys == 8) {
      TiledFinishScore(d, u4, j + 4, vis1, dst + 4 * qb + N, tmax1, bad);
      TiledFinishScore(d, u5, j + 5, vis1, dst + 5 * qb + N, tmax1, bad);
      TiledFinishScore(d, u6, j + 6, vis1, dst + 6 * qb + N, tmax1, bad);
      TiledFinishScore(d, u7, j + 7, vis1, dst + 7 * qb + N, tmax1, bad);
    }
  }
}

// Step 2 over a tile [j0, j1): eight keys per pass, then four, then one.
template <bool kTwo, class D, class VI, class M>
HWY_INLINE void TiledScores(D d, const HeadView& t, size_t qb, size_t j0, size_t j1, VI vis0, VI vis1,
                            hn::Vec<D>& tmax0, hn::Vec<D>& tmax1, M& bad) {
  size_t j = j0;
  for (; j + 8 <= j1; j += 8) TiledScoreKeys<8, kTwo>(d, t, qb, j0, j, vis0, vis1, tmax0, tmax1, bad);
  for (; j + 4 <= j1; j += 4) TiledScoreKeys<4, kTwo>(d, t, qb, j0, j, vis0, vis1, tmax0, tmax1, bad);
  for (; j < j1; ++j) TiledScoreKeys<1, kTwo>(d, t, qb, j0, j, vis0, vis1, tmax0, tmax1, bad);
}

// Step 4, P V of the tile [j0, j1) into the block's rows; a row multiplies only the keys it sees:
// [j0, min(j1, visible)). first: the block's first tile (the rows are written, not read); last: its last tile,
// where groups of four rows that see no other key of it are divided by l as they are stored. Returns the rows so
// divided (bit r: row r; qb <= 32).
template <class D>
HWY_INLINE uint32_t TiledPvTile(D d, const HeadView& t, size_t i0, size_t nb, size_t qb, size_t j0, size_t j1,
                                bool first, bool last) {
  const internal::AttentionProblem& p = *t.p;
  const size_t N = hn::Lanes(d);
  const size_t full = p.value_dim / (4 * N) * (4 * N);
  uint32_t divided = 0;
  size_t r = 0;
  for (; r + 4 <= nb; r += 4) {
    size_t end[4];
    for (size_t x = 0; x < 4; ++x) {
      const size_t n_row = internal::VisibleKeys(p, i0 + r + x);
      end[x] = n_row < j0 ? j0 : (n_row < j1 ? n_row : j1);
    }
    const size_t common = end[0];  // rows see more keys further down the block
    // every row of the group sees the same keys (not causal, or past it) and no column is left over
    const bool divide = last && end[3] == common && full == p.value_dim;
    if (divide) divided |= uint32_t{15} << r;
    for (size_t c = 0; c < full; c += 4 * N) {
      TiledPv4x4(d, t, qb, r, i0 + r, c, j0, common, first, divide);
      for (size_t x = 1; x < 4; ++x) {
        if (end[x] == common) continue;
        PvRow(d, t.pt + r + x, qb, j0, common, end[x], t.v + c, t.v_stride, t.out + (i0 + r + x) * t.out_stride + c,
              4 * N, 1.0f, false);
      }
    }
    if (full < p.value_dim) {
      for (size_t x = 0; x < 4; ++x) {
        PvRow(d, t.pt + r + x, qb, j0, j0, end[x], t.v + full, t.v_stride, t.out + (i0 + r + x) * t.out_stride + full,
              p.value_dim - full, t.alpha[r + x], true, first);
      }
    }
  }
  for (; r < nb; ++r) {
    const size_t n_row = internal::VisibleKeys(p, i0 + r);
    const size_t end = n_row < j0 ? j0 : (n_row < j1 ? n_row : j1);
    PvRow(d, t.pt + r, qb, j0, j0, end, t.v, t.v_stride, t.out + (i0 + r) * t.out_stride, p.value_dim, t.alpha[r], true,
          first);
  }
  return divided;
}

// Step 5, finishing the block: the rows not yet divided are divided by l (rows that saw no key stay 0); rows that
// met a NaN or +inf score are recomputed by FallbackRow.
template <bool kTwo, class D, class M>
HWY_INLINE void TiledFinishBlock(D d, const HeadView& t, size_t i0, size_t nb, hn::Vec<D> l0, hn::Vec<D> l1, M bad,
                                 uint32_t divided) {
  const size_t N = hn::Lanes(d);
  hn::StoreU(l0, d, t.lsum);
  if (kTwo) hn::StoreU(l1, d, t.lsum + N);
  hn::StoreU(hn::IfThenElseZero(bad, hn::Set(d, 1.0f)), d, t.bad_flags);
  // (bad is one mask over both vectors' lanes ORed together: a flagged lane is checked in both halves)
  if (kTwo) hn::StoreU(hn::IfThenElseZero(bad, hn::Set(d, 1.0f)), d, t.bad_flags + N);
  const auto any_bad = !hn::AllFalse(d, bad);
  for (size_t r = 0; r < nb; ++r) {
    float* out_row = t.out + (i0 + r) * t.out_stride;
    if (any_bad && t.bad_flags[r] != 0.0f) {
      FallbackRow(t, i0 + r);
      continue;
    }
    if (t.lsum[r] != 0.0f && ((divided >> r) & 1) == 0) DivideRow(d, out_row, t.p->value_dim, t.lsum[r]);
  }
}

// One block of nb queries (rows i0.. of the head) over all its visible keys; kTwo: two query vectors. Per tile:
// scores (step 2), the online softmax's update (step 3: p = e^(s - m) in place, alpha, m and l), P V (step 4).
template <bool kTwo>
void TiledBlock(const HeadView& t, size_t i0, size_t nb) {
  const internal::AttentionProblem& p = *t.p;
  const TiledTag d;
  const hn::RebindToSigned<TiledTag> di;
  const size_t N = hn::Lanes(d);
  const size_t qb = kTwo ? 2 * N : N;
  TiledPackQueries(d, t, i0, nb, qb);
  const auto vis0 = hn::ConvertTo(di, hn::LoadU(d, t.visible));
  const auto vis1 = kTwo ? hn::ConvertTo(di, hn::LoadU(d, t.visible + N)) : vis0;
  const size_t n_block = internal::VisibleKeys(p, i0 + nb - 1);  // the last row sees the most keys
  if (n_block == 0) {  // no row of the block sees a key (causal, q_len > kv_len)
    for (size_t r = 0; r < nb; ++r) internal::FillRow(t.out + (i0 + r) * t.out_stride, p.value_dim, 0.0f);
    return;
  }
  uint32_t divided = 0;  // bit r: row r is divided (qb <= 32)
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  auto m0 = neg_inf, m1 = neg_inf, l0 = hn::Zero(d), l1 = hn::Zero(d);
  auto bad = hn::FirstN(d, 0);
  for (size_t j0 = 0; j0 < n_block; j0 += t.key_tile) {
    const size_t j1 = n_block - j0 < t.key_tile ? n_block : j0 + t.key_tile;
    auto tmax0 = neg_inf, tmax1 = neg_inf;
    TiledScores<kTwo>(d, t, qb, j0, j1, vis0, vis1, tmax0, tmax1, bad);
    hn::StoreU(TiledSoftmaxUpdate(d, t.pt, qb, j1 - j0, tmax0, m0, l0), d, t.alpha);
    if (kTwo) hn::StoreU(TiledSoftmaxUpdate(d, t.pt + N, qb, j1 - j0, tmax1, m1, l1), d, t.alpha + N);
    const bool first = j0 == 0, last = j1 == n_block;
    if (last) {  // TiledPv4x4 divides by l as it stores
      hn::StoreU(l0, d, t.lsum);
      if (kTwo) hn::StoreU(l1, d, t.lsum + N);
    }
    divided |= TiledPvTile(d, t, i0, nb, qb, j0, j1, first, last);
  }
  TiledFinishBlock<kTwo>(d, t, i0, nb, l0, l1, bad, divided);
}

// Heads and rows of `range`. A block belongs to the range whose rows hold its first row: blocks start at multiples
// of qb as in the whole call, so a part of the work split (range.i_begin a multiple of kAttentionRowBlock) runs the
// same blocks, with the same bits, as the single call; when qb divides kAttentionRowBlock (every power-of-two
// vector) the blocks stay inside the range.
inline void TiledAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                           float* out, float* ws, const internal::AttentionRange& range) {
  const TiledTag d;
  const size_t N = hn::Lanes(d);
  const bool two = p.q_len > N;
  const size_t qb = two ? 2 * N : N;
  HeadView t;
  t.p = &p;
  t.q_stride = p.num_heads * p.head_dim;
  t.k_stride = p.num_kv_heads * p.head_dim;
  t.v_stride = p.num_kv_heads * p.value_dim;
  t.out_stride = p.num_heads * p.value_dim;
  t.key_tile = internal::TiledKeys(p.kv_len);
  t.qt = ws;
  t.pt = t.qt + p.head_dim * qb;
  t.alpha = t.pt + t.key_tile * qb;
  t.lsum = t.alpha + qb;
  t.visible = t.lsum;
  t.bad_flags = t.alpha;
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t first_block = (range.i_begin + qb - 1) / qb * qb;
  for (size_t h = range.h_begin; h < range.h_end; ++h) {
    const size_t g = h / group;
    t.q = q + h * p.head_dim;
    t.k = k + g * p.head_dim;
    t.v = v + g * p.value_dim;
    t.out = out + h * p.value_dim;
    for (size_t i0 = first_block; i0 < range.i_end; i0 += qb) {
      const size_t nb = p.q_len - i0 < qb ? p.q_len - i0 : qb;
      if (two) {
        TiledBlock<true>(t, i0, nb);
      } else {
        TiledBlock<false>(t, i0, nb);
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

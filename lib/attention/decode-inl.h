// The decode path (docs/performance.md, decode path): a few query rows against a long KV cache.

#if defined(EDGEATTN_LIB_ATTENTION_DECODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_DECODE_INL_H_
#undef EDGEATTN_LIB_ATTENTION_DECODE_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_DECODE_INL_H_
#endif

#include <float.h>
#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/attention/attention_split.h"
#include "lib/attention/shared-inl.h"
#include "lib/common/float_util.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/dot/dot-inl.h"
#include "lib/exp/exp_scalar.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Decode path: fewer than kAttentionTiledMinQueries queries, no additive mask (decoding against a KV
// cache). The row path spends most of such a call on per-key overhead: a general-length dot product with
// its loop tails and horizontal sum per key, the row's scores stored, reloaded for the softmax and again
// for P V, and K and V streamed in two separate passes. Here each query row streams its keys once in tiles
// of kDecodeTile: the scores of a tile (eight keys at a time, one accumulator vector per key), an online
// softmax across tiles (the tiled path's: the row's earlier output and sum rescaled by e^(m_old - m_new) at
// most once per tile), and P V of the tile into the output row (four vectors of columns at a time, two
// accumulators each), so a tile's K rows and V rows are read back to back. The numerics are the tiled path's
// with a one-query block, so attention.h's bound holds unchanged. A tile with a non-finite score (NaN, an
// infinity) hands the row to FallbackRow, which follows the softmax rules.
// Keys per online-softmax step. The workspace holds kv_len floats (the row path's need), so a tile of up to 256
// keys costs no extra memory; 256 rather than 64 halves cold calls' time per key lost between the tile's K and V
// streams and amortises each tile's serial softmax step (docs/performance.md, step 13).
constexpr size_t kDecodeTile = 256;


// Scores of keys [0, n) (n <= kDecodeTile) against q_row, times scale, into s.
// Eight keys at a time, one accumulator vector per key; the eight are reduced together by a transposing tree
// (PairSums: log2(N) levels, each halving the partial sums per key) into one vector of eight scores, instead
// of eight horizontal reductions (docs/performance.md, step 13).
template <class D>
HWY_INLINE void DecodeScores(D d, const float* q_row, const float* k, size_t k_stride, size_t head_dim, size_t n,
                             float scale, float* s) {
  size_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  const size_t N = hn::Lanes(d);
  const size_t full = head_dim - head_dim % N;
  const size_t rest = head_dim - full;
  const auto vscale = hn::Set(d, scale);
  for (; N >= 4 && j + 8 <= n; j += 8) {
    const float* k0 = k + j * k_stride;
    const size_t ks = k_stride;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
    for (size_t c = 0; c < full; c += N) {
      const auto qc = hn::LoadU(d, q_row + c);
      const float* kc = k0 + c;
      a0 = hn::MulAdd(qc, hn::LoadU(d, kc), a0);
      a1 = hn::MulAdd(qc, hn::LoadU(d, kc + ks), a1);
      a2 = hn::MulAdd(qc, hn::LoadU(d, kc + 2 * ks), a2);
      a3 = hn::MulAdd(qc, hn::LoadU(d, kc + 3 * ks), a3);
      a4 = hn::MulAdd(qc, hn::LoadU(d, kc + 4 * ks), a4);
      a5 = hn::MulAdd(qc, hn::LoadU(d, kc + 5 * ks), a5);
      a6 = hn::MulAdd(qc, hn::LoadU(d, kc + 6 * ks), a6);
      a7 = hn::MulAdd(qc, hn::LoadU(d, kc + 7 * ks), a7);
    }
    if (rest != 0) {
      const auto qc = LoadTail(d, q_row + full, rest);  // lanes past head_dim are 0 in q and in k
      const float* kc = k0 + full;
      a0 = hn::MulAdd(qc, LoadTail(d, kc, rest), a0);
      a1 = hn::MulAdd(qc, LoadTail(d, kc + ks, rest), a1);
      a2 = hn::MulAdd(qc, LoadTail(d, kc + 2 * ks, rest), a2);
      a3 = hn::MulAdd(qc, LoadTail(d, kc + 3 * ks, rest), a3);
      a4 = hn::MulAdd(qc, LoadTail(d, kc + 4 * ks, rest), a4);
      a5 = hn::MulAdd(qc, LoadTail(d, kc + 5 * ks, rest), a5);
      a6 = hn::MulAdd(qc, LoadTail(d, kc + 6 * ks, rest), a6);
      a7 = hn::MulAdd(qc, LoadTail(d, kc + 7 * ks, rest), a7);
    }
    // Level 1: keys (0,1), (2,3), (4,5), (6,7), N/2 partial sums each; level 2: four keys per vector.
    const auto b0 = PairSums(d, PairSums(d, a0, a1), PairSums(d, a2, a3));
    const auto b1 = PairSums(d, PairSums(d, a4, a5), PairSums(d, a6, a7));
    if (N == 4) {  // one sum per key already: keys 0..3 in b0, 4..7 in b1
      hn::StoreU(hn::Mul(b0, vscale), d, s + j);
      hn::StoreU(hn::Mul(b1, vscale), d, s + j + 4);
      continue;
    }
    auto w = PairSums(d, b0, b1);  // eight keys, N/8 partial sums each
    for (size_t parts = N / 8; parts > 1; parts /= 2) w = PairSums(d, w, w);
    w = hn::Mul(w, vscale);
    if (N == 8) {
      hn::StoreU(w, d, s + j);
    } else {
      StoreTail(d, w, s + j, 8);
    }
  }
#endif
  for (; j < n; ++j) s[j] = Dot(d, q_row, k + j * k_stride, head_dim) * scale;
}

// Largest of the n >= 1 scores in s, or NaN if one of them is not finite (NaN or an infinity).
template <class D>
HWY_INLINE float DecodeTileMax(D d, const float* s, size_t n) {
  const size_t N = hn::Lanes(d);
  const auto lowest = hn::Set(d, -FLT_MAX);
  const auto inf = hn::Set(d, internal::kInfinity);
  auto m = lowest;
  auto bad = hn::Not(hn::Lt(m, inf));  // all false
  size_t j = 0;
  for (; j + N <= n; j += N) {
    const auto x = hn::LoadU(d, s + j);
    bad = hn::Or(bad, hn::Not(hn::Lt(hn::Abs(x), inf)));  // |x| < inf rejects NaN and both infinities
    m = hn::Max(m, x);
  }
  if (j < n) {
    const auto x = hn::IfThenElse(hn::FirstN(d, n - j), LoadTail(d, s + j, n - j), lowest);
    bad = hn::Or(bad, hn::Not(hn::Lt(hn::Abs(x), inf)));
    m = hn::Max(m, x);
  }
  if (!hn::AllFalse(d, bad)) return internal::kQuietNaN;
  // Every lane is finite here (EMU128's MaxOfLanes, which starts from -FLT_MAX, is then exact too).
  return hn::GetLane(hn::MaxOfLanes(d, m));
}

// out_row[c] = (rescale ? out_row[c] * alpha : 0) + sum_{j < n} p_j v_j[c] for c < width.
template <class D>
HWY_INLINE void DecodePv(D d, const float* p, size_t n, const float* v, size_t v_stride, float* out_row, size_t width,
                         float alpha, bool rescale) {
  const size_t N = hn::Lanes(d);
  const auto va = hn::Set(d, alpha);
  size_t c = 0;
  for (; c + 8 * N <= width; c += 8 * N) {
    // Wide rows (d = 128 on AVX-512): eight column vectors, one accumulator each, so that a V row is read in
    // one pass instead of two (docs/performance.md, step 17).
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
    for (size_t j = 0; j < n; ++j) {
      const float* r0 = v + j * v_stride + c;
      const auto p0 = hn::Set(d, p[j]);
      a0 = hn::MulAdd(p0, hn::LoadU(d, r0), a0);
      a1 = hn::MulAdd(p0, hn::LoadU(d, r0 + N), a1);
      a2 = hn::MulAdd(p0, hn::LoadU(d, r0 + 2 * N), a2);
      a3 = hn::MulAdd(p0, hn::LoadU(d, r0 + 3 * N), a3);
      a4 = hn::MulAdd(p0, hn::LoadU(d, r0 + 4 * N), a4);
      a5 = hn::MulAdd(p0, hn::LoadU(d, r0 + 5 * N), a5);
      a6 = hn::MulAdd(p0, hn::LoadU(d, r0 + 6 * N), a6);
      a7 = hn::MulAdd(p0, hn::LoadU(d, r0 + 7 * N), a7);
    }
    float* o = out_row + c;
    if (rescale) {
      a0 = hn::MulAdd(hn::LoadU(d, o), va, a0), a1 = hn::MulAdd(hn::LoadU(d, o + N), va, a1);
      a2 = hn::MulAdd(hn::LoadU(d, o + 2 * N), va, a2), a3 = hn::MulAdd(hn::LoadU(d, o + 3 * N), va, a3);
      a4 = hn::MulAdd(hn::LoadU(d, o + 4 * N), va, a4), a5 = hn::MulAdd(hn::LoadU(d, o + 5 * N), va, a5);
      a6 = hn::MulAdd(hn::LoadU(d, o + 6 * N), va, a6), a7 = hn::MulAdd(hn::LoadU(d, o + 7 * N), va, a7);
    }
    hn::StoreU(a0, d, o), hn::StoreU(a1, d, o + N), hn::StoreU(a2, d, o + 2 * N), hn::StoreU(a3, d, o + 3 * N);
    hn::StoreU(a4, d, o + 4 * N), hn::StoreU(a5, d, o + 5 * N), hn::StoreU(a6, d, o + 6 * N);
    hn::StoreU(a7, d, o + 7 * N);
  }
  for (; c + 4 * N <= width; c += 4 * N) {
    // Two accumulators per column vector (even and odd keys): eight independent FMA chains.
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      const float* r0 = v + j * v_stride + c;
      const float* r1 = r0 + v_stride;
      const auto p0 = hn::Set(d, p[j]), p1 = hn::Set(d, p[j + 1]);
      a0 = hn::MulAdd(p0, hn::LoadU(d, r0), a0);
      a1 = hn::MulAdd(p0, hn::LoadU(d, r0 + N), a1);
      a2 = hn::MulAdd(p0, hn::LoadU(d, r0 + 2 * N), a2);
      a3 = hn::MulAdd(p0, hn::LoadU(d, r0 + 3 * N), a3);
      b0 = hn::MulAdd(p1, hn::LoadU(d, r1), b0);
      b1 = hn::MulAdd(p1, hn::LoadU(d, r1 + N), b1);
      b2 = hn::MulAdd(p1, hn::LoadU(d, r1 + 2 * N), b2);
      b3 = hn::MulAdd(p1, hn::LoadU(d, r1 + 3 * N), b3);
    }
    if (j < n) {
      const float* r0 = v + j * v_stride + c;
      const auto p0 = hn::Set(d, p[j]);
      a0 = hn::MulAdd(p0, hn::LoadU(d, r0), a0);
      a1 = hn::MulAdd(p0, hn::LoadU(d, r0 + N), a1);
      a2 = hn::MulAdd(p0, hn::LoadU(d, r0 + 2 * N), a2);
      a3 = hn::MulAdd(p0, hn::LoadU(d, r0 + 3 * N), a3);
    }
    a0 = hn::Add(a0, b0), a1 = hn::Add(a1, b1), a2 = hn::Add(a2, b2), a3 = hn::Add(a3, b3);
    float* o = out_row + c;
    if (rescale) {
      a0 = hn::MulAdd(hn::LoadU(d, o), va, a0), a1 = hn::MulAdd(hn::LoadU(d, o + N), va, a1);
      a2 = hn::MulAdd(hn::LoadU(d, o + 2 * N), va, a2), a3 = hn::MulAdd(hn::LoadU(d, o + 3 * N), va, a3);
    }
    hn::StoreU(a0, d, o), hn::StoreU(a1, d, o + N), hn::StoreU(a2, d, o + 2 * N), hn::StoreU(a3, d, o + 3 * N);
  }
  if (c < width) {
    if (!rescale) internal::FillRow(out_row + c, width - c, 0.0f);
    PvRow(d, p, 1, 0, 0, n, v + c, v_stride, out_row + c, width - c, alpha, rescale);
  }
}

// The online-softmax step of one row after a tile of nb finite scores s, tile_max the largest: s becomes the
// weights e^(s - m_new), the row's running max m and sum l are updated (first: the row's first tile, whose m is
// -inf and l unused). Returns alpha = e^(m_old - m_new), by which the row's earlier output is rescaled (0 on the
// first tile). Also the KV cache's step (lib/kv_cache/kv_cache-inl.h), which keeps m and l per row across tiles.
// kToNearest false: the exp steps its range reduction to nearest (softmax-inl.h, ExpMinusMaxIn), for chunks computed
// under a directed rounding mode.
template <bool kToNearest = true, class D>
HWY_INLINE float DecodeSoftmaxStep(D d, float* s, size_t nb, float tile_max, bool first, float& m, float& l) {
  const size_t N = hn::Lanes(d);
  const float m_new = tile_max > m ? tile_max : m;
  // Scores are finite here, so m_new is too; alpha = e^(m - m_new) with the rounding of the difference folded
  // in, as for every weight (0 for the first tile: m = -inf).
  const float alpha = first ? 0.0f : internal::ExpRr2P6Shifted(m - m_new, internal::TwoSumError(m, -m_new, m - m_new));
  const auto neg_m = hn::Set(d, -m_new);
  auto sum = hn::Zero(d);
  size_t j = 0;
  for (; j + N <= nb; j += N) {
    const auto e = ExpMinusMaxIn<kToNearest>(d, hn::LoadU(d, s + j), neg_m);
    hn::StoreU(e, d, s + j);
    sum = hn::Add(sum, e);
  }
  if (j < nb) {
    const auto x = hn::IfThenElse(hn::FirstN(d, nb - j), LoadTail(d, s + j, nb - j), hn::Set(d, -internal::kInfinity));
    const auto e = ExpMinusMaxIn<kToNearest>(d, x, neg_m);  // padding lanes: e^-inf = 0
    StoreTail(d, e, s + j, nb - j);
    sum = hn::Add(sum, e);
  }
  const float tile_sum = hn::GetLane(hn::SumOfLanes(d, sum));
  l = first ? tile_sum : l * alpha + tile_sum;
  m = m_new;
  return alpha;
}

// ---- Key chunks (attention.h, the work split). A decode row's keys are cut into chunks of kAttentionKeyChunk keys
// (one chunk when the shape has one: kv_len <= kAttentionKeyChunk, or several queries); each chunk gives a partial
// result, the online softmax's state over its keys, and the partials are combined in chunk order by one function,
// DecodeCombine, which the single call and AttentionFinish both run. So the single call and the parts give the
// same bits, and with one chunk the row is today's decode row (DecodeChunk's tiles, then the division).
static_assert(kAttentionKeyChunk % kDecodeTile == 0, "a key chunk is whole decode tiles");

// A row's partial result over one chunk of keys; the chunk's output row (acc) lives elsewhere: chunk 0's in the
// output row, the others' in the workspace (single call) or the shared buffer (parts). The softmax rules
// (softmax.h) are carried by the flags, since AttentionFinish has no q, k or v to recompute a row: a NaN score
// makes the row NaN; +inf scores share the row (acc then holds the sum of their V rows, pinf their count); -inf
// scores weigh 0; a row whose scores are all -inf outputs zeros (l = 0, acc unused).
struct DecodePartial {
  float m;      // largest finite score of the chunk; -inf: none
  float l;      // sum of e^(s_j - m) over the chunk's finite scores; 0: none (acc not written)
  size_t pinf;  // +inf scores
  bool nan;     // a NaN score
};

inline DecodePartial EmptyPartial() { return DecodePartial{-internal::kInfinity, 0.0f, 0, false}; }

// The chunk of nb keys (k and v at its first key) in two passes over its scores in s (nb floats): the flags, then,
// without +inf or NaN, one softmax step against the chunk's largest finite score and P V into acc. Taken for a
// chunk with a non-finite score, and for every chunk under a directed rounding mode (kToNearest false: the exp
// steps its range reduction to nearest, as the row path's softmax does).
template <bool kToNearest, class D>
HWY_NOINLINE DecodePartial DecodeChunkTwoPass(D d, const internal::AttentionProblem& p, const float* q_row,
                                              const float* k, size_t k_stride, const float* v, size_t v_stride,
                                              size_t nb, float* s, float* acc) {
  DecodePartial r = EmptyPartial();
  DecodeScores(d, q_row, k, k_stride, p.head_dim, nb, p.scale, s);
  float m = -internal::kInfinity;
  for (size_t j = 0; j < nb; ++j) {
    const float x = s[j];
    if (x != x) {
      r.nan = true;
      return r;
    }
    r.pinf += x == internal::kInfinity ? 1 : 0;
    m = x > m && x < internal::kInfinity ? x : m;
  }
  if (r.pinf != 0) {
    internal::FillRow(acc, p.value_dim, 0.0f);
    for (size_t j = 0; j < nb; ++j) {
      if (s[j] != internal::kInfinity) continue;
      const float* v_row = v + j * v_stride;
      for (size_t c = 0; c < p.value_dim; ++c) acc[c] += v_row[c];
    }
    return r;
  }
  if (!(m > -internal::kInfinity)) return r;  // every score -inf: weight 0 each
  DecodeSoftmaxStep<kToNearest>(d, s, nb, m, true, r.m, r.l);
  DecodePv(d, s, nb, v, v_stride, acc, p.value_dim, 0.0f, false);
  return r;
}

// Row i of head h over its visible keys [j_begin, j_end) (j_begin < j_end), into acc. To nearest: the decode tiles'
// online softmax (the path's fast loop); a tile with a non-finite score restarts the chunk in two passes.
template <class D>
HWY_INLINE DecodePartial DecodeChunk(D d, const HeadView& t, size_t i, size_t j_begin, size_t j_end, float* s,
                                     float* acc, bool to_nearest) {
  const internal::AttentionProblem& p = *t.p;
  const float* q_row = t.q + i * t.q_stride;
  const float* k = t.k + j_begin * t.k_stride;
  const float* v = t.v + j_begin * t.v_stride;
  if (!to_nearest) return DecodeChunkTwoPass<false>(d, p, q_row, k, t.k_stride, v, t.v_stride, j_end - j_begin, s, acc);
  DecodePartial r = EmptyPartial();
  for (size_t j0 = j_begin; j0 < j_end; j0 += kDecodeTile) {
    const size_t nb = j_end - j0 < kDecodeTile ? j_end - j0 : kDecodeTile;
    DecodeScores(d, q_row, t.k + j0 * t.k_stride, t.k_stride, p.head_dim, nb, p.scale, s);
    const float tile_max = DecodeTileMax(d, s, nb);
    if (tile_max != tile_max) {
      return DecodeChunkTwoPass<true>(d, p, q_row, k, t.k_stride, v, t.v_stride, j_end - j_begin, s, acc);
    }
    const float alpha = DecodeSoftmaxStep(d, s, nb, tile_max, j0 == j_begin, r.m, r.l);
    DecodePv(d, s, nb, t.v + j0 * t.v_stride, t.v_stride, acc, p.value_dim, alpha, j0 != j_begin);
  }
  return r;
}

// lanes <= Lanes(d) floats of a row.
template <class D>
HWY_INLINE hn::Vec<D> DecodeLoad(D d, const float* p, size_t lanes) {
  return lanes == hn::Lanes(d) ? hn::LoadU(d, p) : LoadTail(d, p, lanes);
}
template <class D>
HWY_INLINE void DecodeStore(D d, hn::Vec<D> x, float* p, size_t lanes) {
  if (lanes == hn::Lanes(d)) {
    hn::StoreU(x, d, p);
  } else {
    StoreTail(d, x, p, lanes);
  }
}

// Adds partial c (its row acc) to the row's state st (its row out_row): the one combine of the single call and of
// AttentionFinish. Finite partials: the online softmax's merge, out = out e^(m - m_new) + acc e^(m_c - m_new), one
// factor exactly 1; the exp (scalar) steps its range reduction to nearest in every mode. Not inlined: one copy per
// target, so that both callers run the same instructions.
template <class D>
HWY_NOINLINE void DecodeCombine(D d, DecodePartial& st, float* out_row, const DecodePartial& c, const float* acc,
                                size_t width) {
  const size_t N = hn::Lanes(d);
  if (st.nan) return;
  if (c.nan) {
    st.nan = true;
    return;
  }
  const bool add_inf = c.pinf != 0 && st.pinf != 0;
  const bool copy = c.pinf != 0 ? st.pinf == 0 : st.pinf == 0 && c.l != 0.0f && st.l == 0.0f;
  if (add_inf || copy) {
    for (size_t x = 0; x < width; x += N) {
      const size_t lanes = width - x < N ? width - x : N;
      const auto a = DecodeLoad(d, acc + x, lanes);
      DecodeStore(d, copy ? a : hn::Add(DecodeLoad(d, out_row + x, lanes), a), out_row + x, lanes);
    }
    if (c.pinf != 0) {
      st.pinf += c.pinf;
    } else {
      st.m = c.m;
      st.l = c.l;
    }
    return;
  }
  if (st.pinf != 0 || c.l == 0.0f) return;  // +inf already decides the row, or c saw only -inf scores
  const float m_new = c.m > st.m ? c.m : st.m;
  const float a = st.m == m_new ? 1.0f
                                : internal::ExpRr2P6Shifted(st.m - m_new, internal::TwoSumError(st.m, -m_new, st.m - m_new));
  const float b = c.m == m_new ? 1.0f
                               : internal::ExpRr2P6Shifted(c.m - m_new, internal::TwoSumError(c.m, -m_new, c.m - m_new));
  const auto va = hn::Set(d, a), vb = hn::Set(d, b);
  for (size_t x = 0; x < width; x += N) {
    const size_t lanes = width - x < N ? width - x : N;
    const auto o = DecodeLoad(d, out_row + x, lanes);
    DecodeStore(d, hn::MulAdd(o, va, hn::Mul(DecodeLoad(d, acc + x, lanes), vb)), out_row + x, lanes);
  }
  st.l = hn::GetLane(hn::MulAdd(hn::Set(d, st.l), va, hn::Mul(hn::Set(d, c.l), vb)));
  st.m = m_new;
}

// The row from its combined state: NaN; the +inf keys' V rows averaged; zeros (no key, or every score -inf); or the
// online softmax's sum divided by l (>= 1: the key at the running max contributes e^0).
template <class D>
HWY_INLINE void DecodeFinishRow(D d, const DecodePartial& st, float* out_row, size_t width) {
  if (st.nan) return internal::FillRow(out_row, width, internal::kQuietNaN);
  if (st.pinf != 0) return DivideRow(d, out_row, width, static_cast<float>(st.pinf));
  if (st.l == 0.0f) return internal::FillRow(out_row, width, 0.0f);
  DivideRow(d, out_row, width, st.l);
}

// The keys of row i in chunk c: [c C, min((c + 1) C, n)), C = kAttentionKeyChunk (with one chunk: all n).
inline void ChunkKeys(size_t n, size_t chunks, size_t c, size_t* j_begin, size_t* j_end) {
  if (chunks == 1) {
    *j_begin = 0;
    *j_end = n;
    return;
  }
  *j_begin = c * kAttentionKeyChunk;
  *j_end = n - *j_begin > kAttentionKeyChunk ? *j_begin + kAttentionKeyChunk : n;
  if (*j_begin > n) *j_end = *j_begin;
}

// Query row i of head h (t.q, t.k, t.v, t.out point at that head): its chunks in order, chunk 0 into the output row,
// the others into acc (value_dim floats of workspace) and combined. s: the workspace for a chunk's scores
// (min(kv_len, kAttentionKeyChunk) floats with several chunks, kv_len with one).
template <class D>
HWY_INLINE void DecodeRow(D d, const HeadView& t, size_t i, float* s, float* acc, size_t chunks, bool to_nearest) {
  const internal::AttentionProblem& p = *t.p;
  const size_t n = internal::VisibleKeys(p, i);
  float* out_row = t.out + i * t.out_stride;
  if (n == 0) return internal::FillRow(out_row, p.value_dim, 0.0f);
  size_t j_begin, j_end;
  ChunkKeys(n, chunks, 0, &j_begin, &j_end);
  DecodePartial st = DecodeChunk(d, t, i, j_begin, j_end, s, out_row, to_nearest);
  for (size_t c = 1; c < chunks; ++c) {
    ChunkKeys(n, chunks, c, &j_begin, &j_end);
    if (j_begin >= j_end) break;  // the later chunks are empty too: combining them changes nothing
    const DecodePartial part = DecodeChunk(d, t, i, j_begin, j_end, s, acc, to_nearest);
    DecodeCombine(d, st, out_row, part, acc, p.value_dim);
  }
  DecodeFinishRow(d, st, out_row, p.value_dim);
}

inline HeadView DecodeView(const internal::AttentionProblem& p) {
  HeadView t{};
  t.p = &p;
  t.q_stride = p.num_heads * p.head_dim;
  t.k_stride = p.num_kv_heads * p.head_dim;
  t.v_stride = p.num_kv_heads * p.value_dim;
  t.out_stride = p.num_heads * p.value_dim;
  return t;
}

inline void DecodeHead(const internal::AttentionProblem& p, HeadView& t, const float* q, const float* k, const float* v,
                       float* out, size_t h) {
  const size_t g = h / (p.num_heads / p.num_kv_heads);
  t.q = q + h * p.head_dim;
  t.k = k + g * p.head_dim;
  t.v = v + g * p.value_dim;
  t.out = out + h * p.value_dim;
}

// Heads and rows of `range`; chunks: the shape's key chunks (attention_split.h), whose partial rows go to
// ws + kAttentionKeyChunk when there are several.
inline void DecodeAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                            float* out, float* s, const internal::AttentionRange& range, size_t chunks,
                            bool to_nearest) {
  const hn::ScalableTag<float> d;
  HeadView t = DecodeView(p);
  float* acc = s + kAttentionKeyChunk;  // used only with several chunks: the workspace then holds kv_len + value_dim
  for (size_t h = range.h_begin; h < range.h_end; ++h) {
    DecodeHead(p, t, q, k, v, out, h);
    for (size_t i = range.i_begin; i < range.i_end; ++i) DecodeRow(d, t, i, s, acc, chunks, to_nearest);
  }
}

inline void StorePartial(const DecodePartial& r, float* header) {
  header[0] = r.m;
  header[1] = r.l;
  header[2] = static_cast<float>(r.pinf);  // <= kAttentionKeyChunk: exact
  header[3] = r.nan ? 1.0f : 0.0f;
}

inline DecodePartial LoadPartial(const float* header) {
  return DecodePartial{header[0], header[1], static_cast<size_t>(header[2]), header[3] != 0.0f};
}

// Part (head h, chunk c) of a chunked shape: every query row's partial over chunk c, its header in shared, its row
// in the output (c = 0) or in shared.
inline void DecodeChunkPart(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                            float* out, const internal::SharedLayout& layout, float* shared, float* s, size_t h,
                            size_t c, bool to_nearest) {
  const hn::ScalableTag<float> d;
  HeadView t = DecodeView(p);
  DecodeHead(p, t, q, k, v, out, h);
  for (size_t i = 0; i < p.q_len; ++i) {
    const size_t row = h * p.q_len + i;
    size_t j_begin, j_end;
    ChunkKeys(internal::VisibleKeys(p, i), layout.chunks, c, &j_begin, &j_end);
    float* acc = c == 0 ? t.out + i * t.out_stride : internal::PartialRow(layout, shared, row, c);
    const DecodePartial r = j_begin < j_end ? DecodeChunk(d, t, i, j_begin, j_end, s, acc, to_nearest) : EmptyPartial();
    StorePartial(r, internal::PartialHeader(layout, shared, row, c));
  }
}

// AttentionFinish of a chunked shape: each row's partials combined in chunk order, then finished.
// (Also AttentionCachedFinish's: out [q_len][num_heads][value_dim], shared rows h * q_len + i.)
inline void DecodeFinishChunks(size_t num_heads, size_t q_len, size_t value_dim, const internal::SharedLayout& layout,
                               float* shared, float* out) {
  const hn::ScalableTag<float> d;
  for (size_t h = 0; h < num_heads; ++h) {
    for (size_t i = 0; i < q_len; ++i) {
      const size_t row = h * q_len + i;
      float* out_row = out + (i * num_heads + h) * value_dim;
      DecodePartial st = LoadPartial(internal::PartialHeader(layout, shared, row, 0));
      for (size_t c = 1; c < layout.chunks; ++c) {
        const DecodePartial part = LoadPartial(internal::PartialHeader(layout, shared, row, c));
        DecodeCombine(d, st, out_row, part, internal::PartialRow(layout, shared, row, c), value_dim);
      }
      DecodeFinishRow(d, st, out_row, value_dim);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

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
// infinity) hands its key chunk to DecodeChunkTwoPass, whose partial result carries the softmax rules.
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

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

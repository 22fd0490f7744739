// SPDX-License-Identifier: Apache-2.0
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
#include "lib/attention/decode_pv-inl.h"
#include "lib/attention/decode_scores-inl.h"
#include "lib/attention/shared-inl.h"
#include "lib/common/float_util.h"
#include "lib/common/formats-inl.h"
#include "lib/common/row_source.h"
#include "lib/common/simd_tail-inl.h"
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

// A head's rescale factor after a tile: alpha = e^(m - m_new), m_new >= m its new running max (finite: the scores
// are), with the rounding of the difference folded in as for every weight; 0 on its first tile (m = -inf). Shared by
// DecodeSoftmaxStep and the paired kv heads' step (lib/kv_cache/kv_pair_lanes-inl.h), which must give its bits.
HWY_INLINE float DecodeAlpha(float m, float m_new, bool first) {
  return first ? 0.0f : internal::ExpRr2P6Shifted(m - m_new, internal::TwoSumError(m, -m_new, m - m_new));
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
  const float alpha = DecodeAlpha(m, m_new, first);
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

// The decode steps the drivers call (decode_chunks-inl.h for Attention, lib/kv_cache for the cache): a policy, as
// attention_driver.h's row kernels are for the row path. A backend supplies kernels by declaring a struct of this
// name in its namespace (lib/common/backend-inl.h), deriving from this one and replacing a subset of the steps, so
// tiling, chunking, the NaN rules and the work split stay written once (docs/architecture.md, "Backends").
//   Scores<Format, GH>  scores of GH query heads against a tile's keys (decode_scores-inl.h, DecodeScores);
//   TileMax             the tile's largest score, NaN if one is not finite;
//   SoftmaxStep<kTo>    the online-softmax step of one head (weights in place, m and l updated; returns alpha);
//   Pv<Format, GH>      P·V of GH heads into their output rows (decode_pv-inl.h, DecodePv);
//   kFormatsInRegisters whether Scores and Pv take F16 and Q8 rows (the KV cache's fused route), or F32 rows only;
//   kFusedHeads         query heads of a group per pass of the fused route: 4 (passes of four, two and one) or 1.
// One head on F32 rows (Attention's decode path, the converted route) inlines its kernels into the tile step, as
// before the family was one: out of line they cost a short call (128 keys) 5-8%. The wider kernels stay out of
// line: one copy each, and their frames off the drivers' (Cortex-M stack budget).
template <class Format, size_t GH, class D>
HWY_NOINLINE void DecodeScoresOutOfLine(D d, const float* const* q, const internal::RowSource& k, size_t head_dim,
                                        size_t nb, float scale, float* const* s) {
  DecodeScores<Format, GH>(d, q, k, head_dim, nb, scale, s);
}
template <class Format, size_t GH, class D>
HWY_NOINLINE void DecodePvOutOfLine(D d, const float* const* p, size_t n, const internal::RowSource& v,
                                    float* const* out, size_t width, const float* alpha, bool rescale) {
  DecodePv<Format, GH>(d, p, n, v, out, width, alpha, rescale);
}
template <class Format, size_t GH>
constexpr bool kDecodeInline = GH == 1 && Format::kBytes == 4 && !Format::kScaled;  // F32Format, one head

struct DecodeKernels {
  static constexpr bool kFormatsInRegisters = HWY_TARGET != HWY_SCALAR;  // see lib/kv_cache/kv_cache-inl.h
  static constexpr size_t kFusedHeads = 4;
  template <class Format, size_t GH, class D>
  static HWY_INLINE void Scores(D d, const float* const* q, const internal::RowSource& k, size_t head_dim, size_t nb,
                                float scale, float* const* s) {
    if constexpr (kDecodeInline<Format, GH>) {
      DecodeScores<Format, GH>(d, q, k, head_dim, nb, scale, s);
    } else {
      DecodeScoresOutOfLine<Format, GH>(d, q, k, head_dim, nb, scale, s);
    }
  }
  template <class D>
  static HWY_INLINE float TileMax(D d, const float* s, size_t n) {
    return DecodeTileMax(d, s, n);
  }
  template <bool kToNearest = true, class D>
  static HWY_INLINE float SoftmaxStep(D d, float* s, size_t nb, float tile_max, bool first, float& m, float& l) {
    return DecodeSoftmaxStep<kToNearest>(d, s, nb, tile_max, first, m, l);
  }
  template <class Format, size_t GH, class D>
  static HWY_INLINE void Pv(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                            size_t width, const float* alpha, bool rescale) {
    if constexpr (kDecodeInline<Format, GH>) {
      DecodePv<Format, GH>(d, p, n, v, out, width, alpha, rescale);
    } else {
      DecodePvOutOfLine<Format, GH>(d, p, n, v, out, width, alpha, rescale);
    }
  }
};

// Where a tile's steps find one query row's heads (those of a KV head's group, or Attention's one head) and keep
// their online-softmax state: q_of(e) and out_of(e) give head e's query row and output (or chunk partial) row.
template <class QOf, class OutOf>
struct TileRow {
  size_t count;  // heads
  float* m;      // [count] running max: -inf before the first tile of a chunk; NaN: a non-finite score met
  float* l;      // [count] running sum
  QOf q_of;
  OutOf out_of;
};

// What the tile steps need besides the rows: the problem's widths and scale, and the scores' scratch (head e of a
// pass writes s + e * s_stride: kDecodeTile floats each, or the tile's count when smaller).
struct TileShape {
  size_t head_dim, value_dim;
  float scale;
  float* s;
  size_t s_stride;
};

// DecodeScores of `count` heads, four, two and one at a time (kMaxHeads 4), or one at a time (kMaxHeads 1: the
// wider passes are not instantiated).
template <class Kernels, class Format, size_t kMaxHeads, class D>
HWY_INLINE void ScoresOfHeads(D d, const float* const* q, size_t count, const internal::RowSource& k,
                              const TileShape& sh, size_t nb, float* const* s) {
  for (size_t e = 0; e < count;) {
    if constexpr (kMaxHeads == 4) {
      if (count - e >= 4) {
        Kernels::template Scores<Format, 4>(d, q + e, k, sh.head_dim, nb, sh.scale, s + e), e += 4;
        continue;
      }
      if (count - e >= 2) {
        Kernels::template Scores<Format, 2>(d, q + e, k, sh.head_dim, nb, sh.scale, s + e), e += 2;
        continue;
      }
    }
    Kernels::template Scores<Format, 1>(d, q + e, k, sh.head_dim, nb, sh.scale, s + e), e += 1;
  }
}

// DecodePv of `count` heads, as ScoresOfHeads groups them.
template <class Kernels, class Format, size_t kMaxHeads, class D>
HWY_INLINE void PvOfHeads(D d, const float* const* p, size_t count, size_t nb, const internal::RowSource& v,
                          float* const* out, size_t width, const float* alpha, bool rescale) {
  for (size_t e = 0; e < count;) {
    if constexpr (kMaxHeads == 4) {
      if (count - e >= 4) {
        Kernels::template Pv<Format, 4>(d, p + e, nb, v, out + e, width, alpha + e, rescale), e += 4;
        continue;
      }
      if (count - e >= 2) {
        Kernels::template Pv<Format, 2>(d, p + e, nb, v, out + e, width, alpha + e, rescale), e += 2;
        continue;
      }
    }
    Kernels::template Pv<Format, 1>(d, p + e, nb, v, out + e, width, alpha + e, rescale), e += 1;
  }
}

// DecodeTile one head at a time (Attention's decode path, the converted route): no arrays of heads, so the frame
// stays as small as the steps' own (Cortex-M: the documented 1 KiB worst case).
template <class Kernels, class Format, class D, class QOf, class OutOf>
HWY_INLINE void DecodeTileOneHead(D d, TileRow<QOf, OutOf>& row, const internal::RowSource& k,
                                  const internal::RowSource& v, size_t nb, const TileShape& sh) {
  for (size_t r = 0; r < row.count; ++r) {
    if (row.m[r] != row.m[r]) continue;  // NaN: redone by the caller
    const float* q_row = row.q_of(r);
    float* s = sh.s;
    Kernels::template Scores<Format, 1>(d, &q_row, k, sh.head_dim, nb, sh.scale, &s);
    const float tile_max = Kernels::TileMax(d, s, nb);
    if (tile_max != tile_max) {
      row.m[r] = internal::kQuietNaN;
      continue;
    }
    const bool rescale = row.m[r] > -internal::kInfinity;  // not the head's first tile of the chunk
    const float alpha = Kernels::SoftmaxStep(d, s, nb, tile_max, !rescale, row.m[r], row.l[r]);
    const float* p = s;
    float* out = row.out_of(r);
    Kernels::template Pv<Format, 1>(d, &p, nb, v, &out, sh.value_dim, &alpha, rescale);
  }
}

// The decode steps of one tile (nb <= kDecodeTile rows of k and v) for the heads of one query row whose state is not
// NaN, up to heads_max (<= kMaxHeads, <= 4) at a time sharing each loaded K and V vector: scores, tile max, the
// online-softmax step, P·V. A head whose tile holds a non-finite score gets m = NaN and is left for its caller to
// redo (its row's fallback carries the softmax rules). Attention's decode path and both KV cache routes run it.
template <class Kernels, class Format, size_t kMaxHeads, class D, class QOf, class OutOf>
HWY_INLINE void DecodeTile(D d, TileRow<QOf, OutOf>& row, const internal::RowSource& k, const internal::RowSource& v,
                           size_t nb, const TileShape& sh, size_t heads_max) {
  static_assert(kMaxHeads == 1 || kMaxHeads == 4, "one head at a time, or passes of four, two and one");
  if constexpr (kMaxHeads == 1) return DecodeTileOneHead<Kernels, Format>(d, row, k, v, nb, sh);
  size_t r = 0;
  while (r < row.count) {
    // The heads' rows are set as each head is picked: a second loop over heads[] was vectorised by GCC into 16-byte
    // loads of the 8-byte stores just made, a store-forwarding stall per tile (12% of the 260K model's tile loop).
    size_t heads[4], count = 0;
    const float* q_rows[4] = {};
    float* s_rows[4] = {};
    float* out_rows[4] = {};
    float alpha[4] = {};
    for (; r < row.count && count < heads_max; ++r) {
      if (row.m[r] != row.m[r]) continue;  // NaN: redone by the caller
      q_rows[count] = row.q_of(r), s_rows[count] = sh.s + count * sh.s_stride;
      heads[count++] = r;
    }
    ScoresOfHeads<Kernels, Format, kMaxHeads>(d, q_rows, count, k, sh, nb, s_rows);
    bool rescale = false;
    size_t live = 0;
    float tile_maxes[4];
    for (size_t e = 0; e < count; ++e) tile_maxes[e] = Kernels::TileMax(d, s_rows[e], nb);
    for (size_t e = 0; e < count; ++e) {
      const size_t state = heads[e];
      const float tile_max = tile_maxes[e];
      if (tile_max != tile_max) {
        row.m[state] = internal::kQuietNaN;
        continue;
      }
      rescale = row.m[state] > -internal::kInfinity;  // the same for every head of the row: the same positions
      s_rows[live] = s_rows[e];
      alpha[live] = Kernels::SoftmaxStep(d, s_rows[e], nb, tile_max, !rescale, row.m[state], row.l[state]);
      out_rows[live++] = row.out_of(state);
    }
    const float* p_rows[4] = {s_rows[0], s_rows[1], s_rows[2], s_rows[3]};  // the weights now
    PvOfHeads<Kernels, Format, kMaxHeads>(d, p_rows, live, nb, v, out_rows, sh.value_dim, alpha, rescale);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

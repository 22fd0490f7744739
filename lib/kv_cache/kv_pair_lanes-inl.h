// SPDX-License-Identifier: Apache-2.0
// Narrow heads two kv heads at a time (docs/performance.md, "Two kv heads in the lanes"): the KV cache's fused route
// for heads 8 wide (the TinyStories-260K shape), x86 AVX-512. A slot holds its kv heads' rows side by side
// ([slot][kv head][8]), so one load takes the K (or V) rows of kv heads g and g + 1 at one position (64 bytes of
// F32, 32 of F16, 16 of Q8, converted as one vector), where the per-head steps (decode-inl.h, DecodeTile) load each
// row on its own and insert two into a vector. Eight slots' K vectors are transposed (24 two-source permutes) into one
// vector per column whose lane 2 s + h holds slot s of kv head g + h, and every later step works on those lanes: the
// scores by eight products per query head, the tile max and the exp on whole vectors, P·V with each slot's weights
// spread over its V vector.
//
// The arithmetic of every (query head, key) is exactly the per-head steps', so a call gives the bits it gives
// one kv head at a time (the work split's parts, which this does not serve, run those): the scores' products and
// their tree ((c0 + c2) + (c1 + c3)) + ((c4 + c6) + (c5 + c7)) (DecodeScoresPaired's ReducePairs), the tile's last
// nb mod 8 keys by RowDot's tree; the weights by ExpMinusMaxIn against the head's new max and alpha by DecodeAlpha; the
// tile sum accumulated per lane over keys j mod 16 and reduced by SumOfLanes (DecodeSoftmaxStep's); P·V in four
// chains per head, key j into chain j mod 4, summed (c0 + c2) + (c1 + c3) (PvNarrowColumns'), then stored as PvStore
// does. A head that meets a non-finite score is marked (m = NaN) and redone by its caller, as DecodeTile marks it.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_PAIR_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_PAIR_LANES_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_PAIR_LANES_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_PAIR_LANES_INL_H_
#endif

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "hwy/highway.h"
#include "lib/attention/decode-inl.h"
#include "lib/common/formats-inl.h"
#include "lib/common/row_source.h"
#include "lib/kv_cache/kv_cache_scalar.h"
#include "lib/kv_cache/kv_cache_storage.h"
#include "lib/kv_cache/kv_route.h"
#include "lib/kv_cache/kv_tiles-inl.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

// Whether a one-chunk call takes the pair kernel for its kv heads g, g + 1 (the caller runs an odd last kv head, and
// every other call, on the per-head steps): route fused, K and V rows of 8 elements (any type), one or two query
// heads per kv head (their query vectors stay in registers), and at least 8 slots, so that a tile's scores in lanes
// (16 floats per 8 keys and query head) fit where the per-head steps keep theirs (the tile region, 17 floats per
// key of a tile).
inline bool PairLanesTake(const internal::KvAttentionProblem& p, internal::KvRoute route) {
  const internal::KvLayout& l = p.layout;
  return route == internal::KvRoute::kFused && l.head_dim == 8 && l.value_dim == 8 && p.group <= 2 && l.heads >= 2 &&
         l.capacity >= 8;
}

// x[s] = slot s's 16 floats (kv head g's 8 columns, then g + 1's) -> x[c] = column c, lane 2 s + h. Each stage moves
// an element from (vector v2 v1 v0, lane l3 l2 l1 l0) to (vector l0 v2 v1, lane v0 l3 l2 l1), so three of them take
// (s, h c) to (c, s h).
HWY_INLINE void TransposeSlots(__m512 (&x)[8]) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int stage = 0; stage < 3; ++stage) {
    const __m512 e0 = _mm512_permutex2var_ps(x[0], even, x[1]), o0 = _mm512_permutex2var_ps(x[0], odd, x[1]);
    const __m512 e1 = _mm512_permutex2var_ps(x[2], even, x[3]), o1 = _mm512_permutex2var_ps(x[2], odd, x[3]);
    const __m512 e2 = _mm512_permutex2var_ps(x[4], even, x[5]), o2 = _mm512_permutex2var_ps(x[4], odd, x[5]);
    const __m512 e3 = _mm512_permutex2var_ps(x[6], even, x[7]), o3 = _mm512_permutex2var_ps(x[6], odd, x[7]);
    x[0] = e0, x[1] = e1, x[2] = e2, x[3] = e3, x[4] = o0, x[5] = o1, x[6] = o2, x[7] = o3;
  }
}

// One slot's rows of kv heads g and g + 1 (row: g's, which g + 1's follows; sp: g's Q8 scale, which g + 1's follows
// two floats on) as 16 floats: the values the per-head steps load (LoadKeyPair, LoadRowVec), F16 converted exactly,
// Q8 as q times its row's scale.
template <class Format>
HWY_INLINE __m512 LoadSlotPair(const unsigned char* row, const unsigned char* sp) {
  if constexpr (std::is_same_v<Format, F16Format>) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(static_cast<const void*>(row))));
  } else if constexpr (std::is_same_v<Format, Q8Format>) {
    float sa, sb;
    memcpy(&sa, sp, sizeof(sa));
    memcpy(&sb, sp + 2 * sizeof(float), sizeof(sb));
    const __m512 scales = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(sa), _mm512_set1_ps(sb));
    const __m128i q = _mm_loadu_si128(static_cast<const __m128i*>(static_cast<const void*>(row)));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), scales);
  } else {
    (void)sp;
    return _mm512_loadu_ps(row);
  }
}

// Slot s's pair of rows in the block of keys from j of src: by strides from r0 and sp0 when the block does not
// wrap around the ring (a pointer array cost a store and a reload per row), else where Row(j + s) is.
template <class Format>
HWY_INLINE __m512 LoadBlockSlot(const internal::RowSource& src, size_t j, size_t s, bool strided,
                                const unsigned char* r0, const unsigned char* sp0) {
  if (strided) return LoadSlotPair<Format>(r0 + s * src.row_bytes, sp0 + s * src.scale_bytes);
  return LoadSlotPair<Format>(src.Row(j + s), src.ScalePtr(j + s));
}

// The scaled scores of one query head (its query columns qv[c] in the lanes of both kv heads) against a transposed
// block k: the per-head steps' products (a fused multiply-add onto +0) and their tree, times scale.
HWY_INLINE __m512 PairScores(const __m512 (&qv)[8], const __m512 (&k)[8], __m512 vscale) {
  const __m512 z = _mm512_setzero_ps();
  __m512 t[8];
  for (int c = 0; c < 8; ++c) t[c] = _mm512_fmadd_ps(qv[c], k[c], z);
  const __m512 lo = _mm512_add_ps(_mm512_add_ps(t[0], t[2]), _mm512_add_ps(t[1], t[3]));
  const __m512 hi = _mm512_add_ps(_mm512_add_ps(t[4], t[6]), _mm512_add_ps(t[5], t[7]));
  return _mm512_mul_ps(_mm512_add_ps(lo, hi), vscale);
}

// One slot's V vector (both kv heads' rows) into chain acc of each query head: its weights (lanes 2 s, 2 s + 1 of
// e[r]) spread over the lower and upper halves.
template <size_t G>
HWY_INLINE void PairPvSlot(__m512 v, __m512i spread, const __m512 (&e)[G], __m512 (&acc)[G]) {
  for (size_t r = 0; r < G; ++r) acc[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(spread, e[r]), v, acc[r]);
}

// A row's state for the pair: per kv head h (0, 1) and query head r of its group, the running max (NaN: a non-finite
// score met; the caller redoes the head) and sum.
struct PairState {
  float m[2][2];
  float l[2][2];
};

// Where a tile's phases read: the rows of kv head g from the tile's first position (kv head g + 1's follow each of
// them) and the scores' scratch (query head r's block b at (r blocks + b) 16).
template <size_t G>
struct PairTileRows {
  internal::RowSource ks, vs;
  size_t full, rem, blocks;  // blocks of 8 keys: full ones, the keys of the last, all
  float scale;
  float* scratch;
};

// Pass 1 over the full blocks: the scores into the scratch, per query head their lanes' max and non-finite lanes.
template <class Format, size_t G>
HWY_INLINE void PairScoreBlocks(const PairTileRows<G>& t, const __m512 (&qv)[G][8], __m512 (&mx)[G],
                                __mmask16 (&bad)[G]) {
  const __m512 vscale = _mm512_set1_ps(t.scale), inf = _mm512_set1_ps(internal::kInfinity);
  for (size_t b = 0; b < t.full; ++b) {
    __m512 x[8];
    const size_t slot0 = t.ks.Slot(8 * b);
    const bool strided = slot0 + 8 <= t.ks.capacity;
    const unsigned char* r0 = t.ks.base + slot0 * t.ks.row_bytes;
    const unsigned char* sp0 = t.ks.scale + slot0 * t.ks.scale_bytes;
    for (size_t s = 0; s < 8; ++s) x[s] = LoadBlockSlot<Format>(t.ks, 8 * b, s, strided, r0, sp0);
    TransposeSlots(x);
    for (size_t r = 0; r < G; ++r) {
      const __m512 sc = PairScores(qv[r], x, vscale);
      _mm512_storeu_ps(t.scratch + (r * t.blocks + b) * 16, sc);
      mx[r] = _mm512_max_ps(mx[r], sc);
      bad[r] |= static_cast<__mmask16>(~_mm512_cmp_ps_mask(_mm512_abs_ps(sc), inf, _CMP_LT_OQ));
    }
  }
}

// Pass 1's last block of rem < 8 keys, whose per-head steps take RowDot (a half vector's products summed by
// SumOfLanes: ((c1 + c5) + (c3 + c7)) + ((c0 + c4) + (c2 + c6)), lane 0 of Highway 1.0.3's 256-bit tree), here in
// lanes on the transposed block; the slots past the keys are zeros, their lanes -inf (weight 0). RowDot key by key
// and head by head cost a 160-position call about 6%.
template <class Format, size_t G>
HWY_INLINE void PairScoreTail(const PairTileRows<G>& t, const __m512 (&qv)[G][8], __m512 (&mx)[G],
                              __mmask16 (&bad)[G]) {
  __m512 x[8];
  for (size_t s = 0; s < 8; ++s) {
    x[s] = s < t.rem ? LoadBlockSlot<Format>(t.ks, 8 * t.full, s, false, nullptr, nullptr) : _mm512_setzero_ps();
  }
  TransposeSlots(x);
  const __mmask16 valid = static_cast<__mmask16>((1u << (2 * t.rem)) - 1);
  const __m512 vscale = _mm512_set1_ps(t.scale), inf = _mm512_set1_ps(internal::kInfinity), z = _mm512_setzero_ps();
  for (size_t r = 0; r < G; ++r) {
    __m512 c[8];
    for (size_t k = 0; k < 8; ++k) c[k] = _mm512_fmadd_ps(qv[r][k], x[k], z);
    const __m512 odd = _mm512_add_ps(_mm512_add_ps(c[1], c[5]), _mm512_add_ps(c[3], c[7]));
    const __m512 even = _mm512_add_ps(_mm512_add_ps(c[0], c[4]), _mm512_add_ps(c[2], c[6]));
    const __m512 sc = _mm512_mask_blend_ps(valid, _mm512_set1_ps(-internal::kInfinity),
                                           _mm512_mul_ps(_mm512_add_ps(odd, even), vscale));
    _mm512_storeu_ps(t.scratch + (r * t.blocks + t.full) * 16, sc);
    mx[r] = _mm512_max_ps(mx[r], sc);
    bad[r] |= static_cast<__mmask16>(valid & ~_mm512_cmp_ps_mask(_mm512_abs_ps(sc), inf, _CMP_LT_OQ));
  }
}

// Block b's V rows into the four chains: slot s into chain s mod 4 (key 8 b + s: j mod 4).
template <class Format, size_t G>
HWY_INLINE void PairPvBlock(const PairTileRows<G>& t, size_t b, const __m512i (&spread)[8], const __m512 (&e)[G],
                            __m512 (&c0)[G], __m512 (&c1)[G], __m512 (&c2)[G], __m512 (&c3)[G]) {
  const internal::RowSource& vs = t.vs;
  const size_t count = b < t.full ? 8 : t.rem, slot0 = vs.Slot(8 * b);
  const unsigned char* r0 = vs.base + slot0 * vs.row_bytes;
  const unsigned char* sp0 = vs.scale + slot0 * vs.scale_bytes;
  if (count == 8 && slot0 + 8 <= vs.capacity) {
    for (size_t s = 0; s < 8; s += 4) {
      PairPvSlot<G>(LoadBlockSlot<Format>(vs, 8 * b, s, true, r0, sp0), spread[s], e, c0);
      PairPvSlot<G>(LoadBlockSlot<Format>(vs, 8 * b, s + 1, true, r0, sp0), spread[s + 1], e, c1);
      PairPvSlot<G>(LoadBlockSlot<Format>(vs, 8 * b, s + 2, true, r0, sp0), spread[s + 2], e, c2);
      PairPvSlot<G>(LoadBlockSlot<Format>(vs, 8 * b, s + 3, true, r0, sp0), spread[s + 3], e, c3);
    }
    return;
  }
  for (size_t s = 0; s < count; ++s) {  // the tile's last keys, or a block across the ring's end
    const __m512 v = LoadBlockSlot<Format>(vs, 8 * b, s, false, r0, sp0);
    switch (s & 3) {
      case 0:
        PairPvSlot<G>(v, spread[s], e, c0);
        break;
      case 1:
        PairPvSlot<G>(v, spread[s], e, c1);
        break;
      case 2:
        PairPvSlot<G>(v, spread[s], e, c2);
        break;
      default:
        PairPvSlot<G>(v, spread[s], e, c3);
        break;
    }
  }
}

// Pass 2: the weights against each head's new max (neg_m: its negation in the head's lanes), their sums (blocks even
// and odd apart: lane l then holds keys j = l mod 16 of its head, as DecodeSoftmaxStep's vector does), and P·V into
// out (per query head: kv head g's columns, then g + 1's), as PvStore leaves it (o alpha + x, or 0 + x).
template <class Format, size_t G>
HWY_INLINE void PairWeightsPv(const PairTileRows<G>& t, const __m512 (&neg_m)[G], __m512 (&sum_even)[G],
                              __m512 (&sum_odd)[G], __m512 (&out)[G]) {
  const hn::ScalableTag<float> d;
  __m512i spread[8];  // slot s's weights (lanes 2 s, 2 s + 1) over the lower and upper halves
  for (int s = 0; s < 8; ++s) {
    spread[s] = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(2 * s), _mm512_set1_epi32(2 * s + 1));
  }
  __m512 c0[G], c1[G], c2[G], c3[G];
  for (size_t r = 0; r < G; ++r) {
    sum_even[r] = sum_odd[r] = c0[r] = c1[r] = c2[r] = c3[r] = _mm512_setzero_ps();
  }
  for (size_t b = 0; b < t.blocks; ++b) {
    __m512 e[G];
    for (size_t r = 0; r < G; ++r) {
      const hn::Vec<decltype(d)> x{_mm512_loadu_ps(t.scratch + (r * t.blocks + b) * 16)}, nm{neg_m[r]};
      e[r] = ExpMinusMaxIn<true>(d, x, nm).raw;
      if ((b & 1) == 0) {
        sum_even[r] = _mm512_add_ps(sum_even[r], e[r]);
      } else {
        sum_odd[r] = _mm512_add_ps(sum_odd[r], e[r]);
      }
    }
    PairPvBlock<Format, G>(t, b, spread, e, c0, c1, c2, c3);
  }
  for (size_t r = 0; r < G; ++r) out[r] = _mm512_add_ps(_mm512_add_ps(c0[r], c2[r]), _mm512_add_ps(c1[r], c3[r]));
}

// After pass 1: each live head's new max and alpha (DecodeSoftmaxStep's), or, with a non-finite score, the head
// marked (its lanes run on, their results unused: the caller redoes the head).
template <size_t G>
HWY_INLINE void PairMaxima(PairState& st, bool (&live)[2][G], bool rescale, const __m512 (&mx)[G],
                           const __mmask16 (&bad)[G], float (&m_new)[2][G], float (&alpha)[2][G]) {
  for (size_t h = 0; h < 2; ++h) {
    const __mmask16 parity = h == 0 ? 0x5555 : 0xAAAA;
    for (size_t r = 0; r < G; ++r) {
      m_new[h][r] = 0.0f, alpha[h][r] = 0.0f;
      if (!live[h][r]) continue;
      if ((bad[r] & parity) != 0) {
        st.m[h][r] = internal::kQuietNaN, live[h][r] = false;
        continue;
      }
      const float tile_max = _mm512_mask_reduce_max_ps(parity, mx[r]);
      const float m = st.m[h][r];
      m_new[h][r] = tile_max > m ? tile_max : m;
      alpha[h][r] = DecodeAlpha(m, m_new[h][r], !rescale);
    }
  }
}

// One query row's tile of nb keys (positions from a, nb <= kDecodeTile) for the query heads of kv heads g and g + 1:
// q_row and out_row at the row's first head; scratch holds G (nb rounded up to 8) 2 floats.
template <class Format, size_t G>
HWY_INLINE void PairTile(const internal::KvAttentionProblem& p, const float* q_row, float* out_row, size_t g, size_t a,
                         size_t nb, float* scratch, PairState& st) {
  const hn::ScalableTag<float> d;
  static_assert(hn::MaxLanes(d) == 16, "AVX-512's 16 floats");
  bool live[2][G], any = false, rescale = false;
  for (size_t h = 0; h < 2; ++h) {
    for (size_t r = 0; r < G; ++r) {
      live[h][r] = st.m[h][r] == st.m[h][r];
      if (live[h][r]) any = true, rescale = st.m[h][r] > -internal::kInfinity;
    }
  }
  if (!any) return;
  PairTileRows<G> t{internal::KvRows(p.layout, p.storage, g, internal::KvSide::kKey, a),
                    internal::KvRows(p.layout, p.storage, g, internal::KvSide::kValue, a),
                    nb / 8,
                    nb % 8,
                    (nb + 7) / 8,
                    p.scale,
                    scratch};
  __m512 qv[G][8];  // query head r's column c in the lanes of both kv heads
  for (size_t r = 0; r < G; ++r) {
    const float* qa = q_row + (g * G + r) * 8;  // kv head g's query head r, then g + 1's
    const float* qb = q_row + ((g + 1) * G + r) * 8;
    for (size_t c = 0; c < 8; ++c)
      qv[r][c] = _mm512_mask_blend_ps(0xAAAA, _mm512_set1_ps(qa[c]), _mm512_set1_ps(qb[c]));
  }
  __m512 mx[G], neg_m[G], sum_even[G], sum_odd[G], x[G];
  __mmask16 bad[G];
  for (size_t r = 0; r < G; ++r) mx[r] = _mm512_set1_ps(-FLT_MAX), bad[r] = 0;
  PairScoreBlocks<Format, G>(t, qv, mx, bad);
  if (t.rem != 0) PairScoreTail<Format, G>(t, qv, mx, bad);
  float m_new[2][G], alpha[2][G];
  PairMaxima<G>(st, live, rescale, mx, bad, m_new, alpha);
  for (size_t r = 0; r < G; ++r) {
    neg_m[r] = _mm512_mask_blend_ps(0xAAAA, _mm512_set1_ps(-m_new[0][r]), _mm512_set1_ps(-m_new[1][r]));
  }
  PairWeightsPv<Format, G>(t, neg_m, sum_even, sum_odd, x);
  const __m512i sum_index[2] = {_mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
                                _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31)};
  for (size_t r = 0; r < G; ++r) {
    for (size_t h = 0; h < 2; ++h) {
      if (!live[h][r]) continue;
      const hn::Vec<decltype(d)> lanes{_mm512_permutex2var_ps(sum_even[r], sum_index[h], sum_odd[r])};
      const float tile_sum = hn::GetLane(hn::SumOfLanes(d, lanes));
      st.l[h][r] = rescale ? st.l[h][r] * alpha[h][r] + tile_sum : tile_sum;
      st.m[h][r] = m_new[h][r];
    }
    float* out_a = out_row + (g * G + r) * 8;
    float* out_b = out_row + ((g + 1) * G + r) * 8;
    __m512 y = _mm512_add_ps(_mm512_setzero_ps(), x[r]);  // a head's first tile: 0 + x
    if (rescale) {                                        // o alpha + x, one rounding
      const __m512 o = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(out_a)), _mm256_loadu_ps(out_b), 1);
      y = _mm512_fmadd_ps(o, _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(alpha[0][r]), _mm512_set1_ps(alpha[1][r])),
                          x[r]);
    }
    _mm256_storeu_ps(out_a, _mm512_castps512_ps256(y));
    _mm256_storeu_ps(out_b, _mm512_extractf32x8_ps(y, 1));
  }
}

// Kv heads g and g + 1 of a one-chunk call (PairLanesTake), every query row: the tiles on the call's grid (multiples
// of kDecodeTile from the first position it sees, as KvChunkTiles cuts them), rows inside tiles, then each head
// finished as KvOneChunkRows finishes it. Not inlined, as KvOneChunkRows is not.
template <class Format, size_t G>
HWY_NOINLINE void KvPairRows(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws, size_t g) {
  const hn::ScalableTag<float> d;
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  PairState st[kAttentionTiledMinQueries];  // q_len < kAttentionTiledMinQueries: route fused
  for (size_t i = 0; i < p.q_len; ++i) {
    for (size_t h = 0; h < 2; ++h) {
      for (size_t r = 0; r < 2; ++r) st[i].m[h][r] = -internal::kInfinity, st[i].l[h][r] = 0.0f;
    }
  }
  size_t first_lo, last_hi, unused;
  internal::KvVisible(p, 0, &first_lo, &unused);
  internal::KvVisible(p, p.q_len - 1, &unused, &last_hi);
  const size_t row_floats = p.num_heads * 8;
  for (size_t t0 = first_lo; t0 < last_hi; t0 += kDecodeTile) {
    const size_t t1 = last_hi - t0 < kDecodeTile ? last_hi : t0 + kDecodeTile;
    for (size_t i = 0; i < p.q_len; ++i) {
      size_t lo, hi;
      internal::KvVisible(p, i, &lo, &hi);
      const size_t a = lo > t0 ? lo : t0, b = hi < t1 ? hi : t1;
      if (a < b) PairTile<Format, G>(p, q + i * row_floats, out + i * row_floats, g, a, b - a, region, st[i]);
    }
  }
  for (size_t i = 0; i < p.q_len; ++i) {
    for (size_t h = 0; h < 2; ++h) {
      for (size_t r = 0; r < G; ++r) {
        KvFinishRow(d, p, q, out, region, i, (g + h) * G + r, st[i].m[h][r], st[i].l[h][r]);
      }
    }
  }
}

// KvPairRows of the cache's type and group.
HWY_INLINE void KvPairRowsOfType(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws,
                                 size_t g) {
  switch (p.layout.type) {
    case KvType::kF16:
      return p.group == 1 ? KvPairRows<F16Format, 1>(p, q, out, ws, g) : KvPairRows<F16Format, 2>(p, q, out, ws, g);
    case KvType::kQ8:
      return p.group == 1 ? KvPairRows<Q8Format, 1>(p, q, out, ws, g) : KvPairRows<Q8Format, 2>(p, q, out, ws, g);
    case KvType::kF32:
      break;
  }
  p.group == 1 ? KvPairRows<F32Format, 1>(p, q, out, ws, g) : KvPairRows<F32Format, 2>(p, q, out, ws, g);
}

#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// SPDX-License-Identifier: Apache-2.0
// Prefill with narrow heads (docs/performance.md, "Prefill with narrow heads"): the converted route's tiles for a call
// of at least kAttentionTiledMinQueries query rows whose heads are 8 or 16 wide, with one (query row, query head) per
// vector lane. The decode steps (decode-inl.h) run one query row at a time: at d = 8 each score then costs a
// transposing reduction and each row's online-softmax step its horizontal max and sum, about 8-20 cycles per (query,
// key) pair on AVX-512. Here a vector holds the scores of N (row, head) pairs for one key: the key's elements are
// broadcast against the transposed queries, the softmax's max, sum and rescaling are lane-wise, and P·V broadcasts the
// value's elements against the weights, so nothing is reduced across lanes.
//
// Each lane computes only from its own query row, the keys it sees and the tile grid (kDecodeTile positions from the
// call's first visible position, as the decode steps' tiles), so its bits do not depend on the other lanes of its
// vector: a work split's row blocks, a ring and a linear cache holding the same positions, and an F16 or Q8 cache
// against an F32 cache holding the values Read returns all give the same bits. A key a lane does not see is left out
// by selects (its score -inf, its weight's product never added), never by a multiply by 0, so a non-finite value in
// another row's key or value cannot reach the lane. A lane meeting a non-finite score gets m = NaN and is redone by
// the caller as the decode steps' rows are (softmax.h's rules).
//
// Per (row, key) the arithmetic: s = ((sum of q_c k_c over even c) + (sum over odd c)) * scale, each sum a chain of
// fused multiply-adds in c's order; per tile m_new = max(m, the tile's largest score), alpha = e^(m - m_new) (0 when
// m = -inf), acc and l times alpha; then per key w = e^(s - m_new) (ExpMinusMaxIn, the rounding of s - m folded in),
// l = l + w and acc_c = acc_c + w v_c (fused), in the keys' order. attention.h's bound holds: a dot product of d
// terms, one exp per key, sums of positive weights.
//
// x86 AVX2 and AVX-512 only (measured there); head_dim == value_dim in {8, 16}; elsewhere the decode steps.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_PREFILL_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_PREFILL_LANES_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_PREFILL_LANES_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_PREFILL_LANES_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/decode-inl.h"
#include "lib/common/float_util.h"
#include "lib/kv_cache/kv_cache_scalar.h"
#include "lib/kv_cache/kv_tiles-inl.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
constexpr bool kPrefillLanes = true;
#else
constexpr bool kPrefillLanes = false;
#endif

// Whether KvPrefillLanes takes rows of a call on the converted route whose chunk is [cb, ce): a prefill (at least
// kAttentionTiledMinQueries rows; fewer take the fused route's decode steps, whose bits Attention's decode path
// shares), heads of 8 or 16 on both sides, and a chunk whose positions fit the lanes' int32 offsets.
inline bool PrefillLanesTake(const internal::KvAttentionProblem& p, size_t cb, size_t ce) {
  const size_t dk = p.layout.head_dim;
  return kPrefillLanes && p.q_len >= kAttentionTiledMinQueries && dk == p.layout.value_dim && (dk == 8 || dk == 16) &&
         ce - cb < (size_t{1} << 30);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2

// The scores of key row k against the lanes' transposed queries qt[c] (kDim vectors): two chains of fused
// multiply-adds (even and odd c), added, times scale.
template <size_t kDim, class D, class V = hn::VFromD<D>>
HWY_INLINE V PrefillLaneScores(D d, const V* qt, const float* HWY_RESTRICT k, V vscale) {
  V even = hn::Mul(qt[0], hn::Set(d, k[0]));
  V odd = hn::Mul(qt[1], hn::Set(d, k[1]));
  for (size_t c = 2; c < kDim; c += 2) {
    even = hn::MulAdd(qt[c], hn::Set(d, k[c]), even);
    odd = hn::MulAdd(qt[c + 1], hn::Set(d, k[c + 1]), odd);
  }
  return hn::Mul(hn::Add(even, odd), vscale);
}

// Keys [a, b) of a tile (rows at k_rows, v_rows with their strides; key j's row at index j - t0), lanes' state in
// m_tile (pass 1) or acc/l (pass 2). kMasked: keys some lane does not see (rel_lo <= j - base < rel_hi per lane).
template <size_t kDim, bool kMasked, class D, class V = hn::VFromD<D>>
HWY_INLINE void PrefillLanesMax(D d, const V* qt, V vscale, const float* k_rows, size_t k_stride, size_t t0, size_t a,
                                size_t b, size_t base, hn::VFromD<hn::RebindToSigned<D>> rel_lo,
                                hn::VFromD<hn::RebindToSigned<D>> rel_hi, V& m_tile, hn::Mask<D>& bad) {
  const hn::RebindToSigned<D> di;
  const V inf = hn::Set(d, internal::kInfinity), neg_inf = hn::Set(d, -internal::kInfinity);
  for (size_t j = a; j < b; ++j) {
    V s = PrefillLaneScores<kDim>(d, qt, k_rows + (j - t0) * k_stride, vscale);
    const auto not_finite = hn::Not(hn::Lt(hn::Abs(s), inf));
    if constexpr (kMasked) {
      const auto rel = hn::Set(di, static_cast<int32_t>(j - base));
      const auto seen = hn::RebindMask(d, hn::And(hn::Not(hn::Lt(rel, rel_lo)), hn::Lt(rel, rel_hi)));
      bad = hn::Or(bad, hn::And(seen, not_finite));
      s = hn::IfThenElse(seen, s, neg_inf);
    } else {
      bad = hn::Or(bad, not_finite);
    }
    m_tile = hn::Max(m_tile, s);
  }
}

template <size_t kDim, bool kMasked, class D, class V = hn::VFromD<D>>
HWY_INLINE void PrefillLanesAccumulate(D d, const V* qt, V vscale, const float* k_rows, size_t k_stride,
                                       const float* v_rows, size_t v_stride, size_t t0, size_t a, size_t b, size_t base,
                                       hn::VFromD<hn::RebindToSigned<D>> rel_lo,
                                       hn::VFromD<hn::RebindToSigned<D>> rel_hi, V neg_m, V* acc, V& l) {
  const hn::RebindToSigned<D> di;
  const V neg_inf = hn::Set(d, -internal::kInfinity);
  for (size_t j = a; j < b; ++j) {
    V s = PrefillLaneScores<kDim>(d, qt, k_rows + (j - t0) * k_stride, vscale);
    const float* HWY_RESTRICT v = v_rows + (j - t0) * v_stride;
    if constexpr (kMasked) {
      const auto rel = hn::Set(di, static_cast<int32_t>(j - base));
      const auto seen = hn::RebindMask(d, hn::And(hn::Not(hn::Lt(rel, rel_lo)), hn::Lt(rel, rel_hi)));
      s = hn::IfThenElse(seen, s, neg_inf);
      const V w = ExpMinusMaxIn<true>(d, s, neg_m);  // 0 where not seen
      l = hn::Add(l, w);
      for (size_t c = 0; c < kDim; ++c) acc[c] = hn::IfThenElse(seen, hn::MulAdd(w, hn::Set(d, v[c]), acc[c]), acc[c]);
    } else {
      const V w = ExpMinusMaxIn<true>(d, s, neg_m);
      l = hn::Add(l, w);
      for (size_t c = 0; c < kDim; ++c) acc[c] = hn::MulAdd(w, hn::Set(d, v[c]), acc[c]);
    }
  }
}

// A block of lanes: lane e is (query row i_begin + (l0 + e) / group, head (l0 + e) % group); its transposed query
// row, the positions it sees within [cb, ce) as offsets from cb, the union [lo, hi) of what the block's lanes see
// and the part [all_lo, all_hi) (possibly empty) every written lane sees. Lanes from count on pad the vector and see
// nothing.
template <size_t kDim, size_t kMaxN>
struct PrefillLaneBlock {
  HWY_ALIGN float qt[kDim * kMaxN];
  HWY_ALIGN int32_t rel_lo[kMaxN], rel_hi[kMaxN];
  size_t lo, hi, all_lo, all_hi;

  void Set(const internal::KvAttentionProblem& p, const float* q, size_t g, size_t i_begin, size_t l0, size_t count,
           size_t N, size_t cb, size_t ce) {
    const size_t group = p.group;
    lo = ce, hi = cb, all_lo = cb, all_hi = ce;
    for (size_t e = 0; e < N; ++e) {
      size_t a = cb, b = cb;  // a padding lane sees nothing
      if (e < count) {
        const size_t lane = l0 + e, i = i_begin + lane / group, r = lane % group;
        internal::KvVisible(p, i, &a, &b);
        a = a > cb ? a : cb;
        b = b < ce ? b : ce;
        if (a >= b) a = b = cb;
        const float* q_row = q + (i * p.num_heads + g * group + r) * kDim;
        for (size_t c = 0; c < kDim; ++c) qt[c * N + e] = q_row[c];
        all_lo = a > all_lo ? a : all_lo;  // padding lanes are never written: they need not see only their keys
        all_hi = b < all_hi ? b : all_hi;
      } else {
        for (size_t c = 0; c < kDim; ++c) qt[c * N + e] = 0.0f;
      }
      if (a < b) {
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
      }
      rel_lo[e] = static_cast<int32_t>(a - cb);
      rel_hi[e] = static_cast<int32_t>(b - cb);
    }
    if (all_lo > all_hi) all_lo = all_hi;
  }
};

// The lanes' state into their rows: m (NaN where a score was not finite: the row is redone), l, and acc transposed
// back into each row's output.
template <size_t kDim, class D, class V = hn::VFromD<D>>
HWY_INLINE void PrefillLanesStore(D d, const KvRows& rows, size_t group, size_t l0, size_t count, V m, V l,
                                  const V* acc, hn::Mask<D> bad, const KvRowGrid& acc_of) {
  constexpr size_t kMaxN = hn::MaxLanes(D());
  const size_t N = hn::Lanes(d);
  HWY_ALIGN float m_lanes[kMaxN], l_lanes[kMaxN], acc_lanes[kDim * kMaxN];
  hn::Store(hn::IfThenElse(bad, hn::Set(d, internal::kQuietNaN), m), d, m_lanes);
  hn::Store(l, d, l_lanes);
  for (size_t c = 0; c < kDim; ++c) hn::Store(acc[c], d, acc_lanes + c * N);
  for (size_t e = 0; e < count; ++e) {
    const size_t lane = l0 + e, i = rows.i_begin + lane / group, r = lane % group;
    rows.m[i * group + r] = m_lanes[e];
    rows.lsum[i * group + r] = l_lanes[e];
    float* out = acc_of(i, r);
    for (size_t c = 0; c < kDim; ++c) out[c] = acc_lanes[c * N + e];
  }
}

// The online-softmax state of a block of lanes between tiles: m, l, acc (kDim vectors) and the non-finite flags.
template <size_t kDim, size_t kMaxN>
struct PrefillLaneState {
  HWY_ALIGN float m[kMaxN], l[kMaxN], acc[kDim * kMaxN];
  HWY_ALIGN int32_t bad[kMaxN];

  template <class D>
  void Reset(D d) {
    const hn::RebindToSigned<D> di;
    hn::Store(hn::Set(d, -internal::kInfinity), d, m);
    hn::Store(hn::Zero(d), d, l);
    for (size_t c = 0; c < kDim; ++c) hn::Store(hn::Zero(d), d, acc + c * hn::Lanes(d));
    hn::Store(hn::Zero(di), di, bad);
  }
};

// Blocks of lanes whose state a set keeps between tiles: 64 lanes at d = 8, 32 at d = 16 (about 5 KiB of frame).
template <size_t kDim, size_t N>
constexpr size_t PrefillSetBlocks() {
  return (64 * 8 / kDim) / N > 0 ? (64 * 8 / kDim) / N : 1;
}

// Block b's keys [a, t1) of a tile whose rows (k_rows, v_rows with their strides) start at key load0: its state
// loaded from s, the tile's max pass, the rescaling, the weights' pass, and the state stored back.
template <size_t kDim, size_t kMaxN, class D, class V = hn::VFromD<D>>
HWY_INLINE void PrefillBlockTile(D d, const PrefillLaneBlock<kDim, kMaxN>& b, PrefillLaneState<kDim, kMaxN>& s,
                                 V vscale, const float* k_rows, size_t ks, const float* v_rows, size_t vs, size_t load0,
                                 size_t a, size_t t1, size_t cb) {
  const hn::RebindToSigned<D> di;
  const size_t N = hn::Lanes(d);
  const V neg_inf = hn::Set(d, -internal::kInfinity);
  V qt[kDim], acc[kDim];
  for (size_t c = 0; c < kDim; ++c) qt[c] = hn::Load(d, b.qt + c * N), acc[c] = hn::Load(d, s.acc + c * N);
  const auto rel_lo = hn::Load(di, b.rel_lo), rel_hi = hn::Load(di, b.rel_hi);
  V m = hn::Load(d, s.m), l = hn::Load(d, s.l);
  auto bad = hn::RebindMask(d, hn::Ne(hn::Load(di, s.bad), hn::Zero(di)));
  // Keys every lane sees: [u0, u1) within [a, t1); the keys before and after it are masked.
  const size_t u0 = b.all_lo > a ? (b.all_lo < t1 ? b.all_lo : t1) : a;
  const size_t u1 = b.all_hi < t1 ? (b.all_hi > u0 ? b.all_hi : u0) : t1;
  V m_tile = neg_inf;
  PrefillLanesMax<kDim, true>(d, qt, vscale, k_rows, ks, load0, a, u0, cb, rel_lo, rel_hi, m_tile, bad);
  PrefillLanesMax<kDim, false>(d, qt, vscale, k_rows, ks, load0, u0, u1, cb, rel_lo, rel_hi, m_tile, bad);
  PrefillLanesMax<kDim, true>(d, qt, vscale, k_rows, ks, load0, u1, t1, cb, rel_lo, rel_hi, m_tile, bad);
  const V m_new = hn::Max(m, m_tile);
  // alpha = e^(m - m_new): 0 for a lane that has seen no key before (m = -inf), 1 for one that sees none here.
  const auto fresh = hn::Eq(m, neg_inf);
  const V neg_m = hn::IfThenZeroElse(hn::Eq(m_new, neg_inf), hn::Neg(m_new));
  const V alpha = hn::IfThenZeroElse(fresh, ExpMinusMaxIn<true>(d, hn::IfThenZeroElse(fresh, m), neg_m));
  l = hn::Mul(l, alpha);
  for (size_t c = 0; c < kDim; ++c) acc[c] = hn::Mul(acc[c], alpha);
  PrefillLanesAccumulate<kDim, true>(d, qt, vscale, k_rows, ks, v_rows, vs, load0, a, u0, cb, rel_lo, rel_hi, neg_m,
                                     acc, l);
  PrefillLanesAccumulate<kDim, false>(d, qt, vscale, k_rows, ks, v_rows, vs, load0, u0, u1, cb, rel_lo, rel_hi, neg_m,
                                      acc, l);
  PrefillLanesAccumulate<kDim, true>(d, qt, vscale, k_rows, ks, v_rows, vs, load0, u1, t1, cb, rel_lo, rel_hi, neg_m,
                                     acc, l);
  hn::Store(m_new, d, s.m);
  hn::Store(l, d, s.l);
  for (size_t c = 0; c < kDim; ++c) hn::Store(acc[c], d, s.acc + c * N);
  hn::Store(hn::VecFromMask(di, hn::RebindMask(di, bad)), di, s.bad);
}

// KvChunkTiles' contract for the rows [rows.i_begin, rows.i_end) of kv head g over the chunk [cb, ce) (every head of
// the group): rows.m, rows.lsum and acc_of(i, r) as the decode steps leave them (m = NaN for a row to redo; else
// acc undivided, l its sum of weights). Lanes in blocks of N and blocks in sets: each tile is read (an F16 or Q8
// tile converted) once per set, and each block of the set runs over the keys of the tile it sees, its state kept in
// the set's arrays between tiles, as it would stay in registers alone: the same keys, in the same order, per tile.
template <size_t kDim, class D>
HWY_NOINLINE void KvPrefillLanes(D d, const internal::KvAttentionProblem& p, const float* q, size_t g,
                                 const KvRows& rows, size_t first_lo, size_t cb, size_t ce, float* region,
                                 const KvRowGrid& acc_of) {
  using V = hn::VFromD<D>;
  constexpr size_t kMaxN = hn::MaxLanes(D());
  constexpr size_t kSet = PrefillSetBlocks<kDim, kMaxN>();
  const hn::RebindToSigned<D> di;
  const size_t N = hn::Lanes(d);
  const size_t lanes = (rows.i_end - rows.i_begin) * p.group;
  const V vscale = hn::Set(d, p.scale);
  ConvertedTiles reader(p, g, region);
  reader.in_place_unaligned = true;
  PrefillLaneBlock<kDim, kMaxN> blk[kSet];
  PrefillLaneState<kDim, kMaxN> st[kSet];
  for (size_t set0 = 0; set0 < lanes; set0 += kSet * N) {
    size_t blocks = 0, lo = ce, hi = cb;  // the set's blocks and the union of the keys they see
    for (; blocks < kSet && set0 + blocks * N < lanes; ++blocks) {
      const size_t l0 = set0 + blocks * N, count = lanes - l0 < N ? lanes - l0 : N;
      PrefillLaneBlock<kDim, kMaxN>& b = blk[blocks];
      b.Set(p, q, g, rows.i_begin, l0, count, N, cb, ce);
      st[blocks].Reset(d);
      if (b.lo < b.hi) lo = b.lo < lo ? b.lo : lo, hi = b.hi > hi ? b.hi : hi;
    }
    for (size_t t0 = lo < hi ? first_lo + (lo - first_lo) / kDecodeTile * kDecodeTile : hi; t0 < hi;
         t0 += kDecodeTile) {
      const size_t tile_end = hi - t0 < kDecodeTile ? hi : t0 + kDecodeTile;
      const size_t load0 = t0 > lo ? t0 : lo;
      reader.Load(d, load0, tile_end - load0);
      for (size_t bi = 0; bi < blocks; ++bi) {
        const PrefillLaneBlock<kDim, kMaxN>& b = blk[bi];
        // This block's keys of the tile, [a, t1), as the block alone would read them; none: the tile is skipped.
        if (b.lo >= b.hi || b.hi <= t0) continue;
        const size_t a = t0 > b.lo ? t0 : b.lo;
        const size_t t1 = b.hi - t0 < kDecodeTile ? b.hi : t0 + kDecodeTile;
        if (a >= t1) continue;
        PrefillBlockTile<kDim>(d, b, st[bi], vscale, reader.k_tile, reader.k_stride, reader.v_tile, reader.v_stride,
                               load0, a, t1, cb);
      }
    }
    for (size_t bi = 0; bi < blocks; ++bi) {
      if (blk[bi].lo >= blk[bi].hi) continue;  // no lane sees a key of this chunk: its rows are left as they are
      const size_t l0 = set0 + bi * N, count = lanes - l0 < N ? lanes - l0 : N;
      const PrefillLaneState<kDim, kMaxN>& s = st[bi];
      V acc[kDim];
      for (size_t c = 0; c < kDim; ++c) acc[c] = hn::Load(d, s.acc + c * N);
      const auto bad = hn::RebindMask(d, hn::Ne(hn::Load(di, s.bad), hn::Zero(di)));
      PrefillLanesStore<kDim>(d, rows, p.group, l0, count, hn::Load(d, s.m), hn::Load(d, s.l), acc, bad, acc_of);
    }
  }
}

#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

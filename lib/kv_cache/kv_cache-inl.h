// Attention against a KV cache on Highway vectors: the decode path's per-tile steps over tiles of the cache.
//
// Per kv head g, the positions any query of the call sees, [lo of the first query, hi of the last), are cut into
// tiles of kDecodeTile logical positions from the first of them, so where a ring keeps a position never changes a
// tile (ring and linear caches give the same bits). Each tile's K and V rows of head g are converted to f32 once
// into the workspace (f16 by integer operations, exact; int8 times its row's scale, the product Read returns) and
// every query row and query head of the group runs the decode path's steps on its part of the tile: scores
// (DecodeScores), tile max, online-softmax update (the row's running max and sum in the workspace), P V into the
// output row (DecodePv); the rows are divided by their sums at the end. So GQA reads each K/V head once per group,
// not once per query head, and a decode step (q_len < kAttentionTiledMinQueries) on an F32 cache without window
// gives the bits of Attention's decode path on the same K and V. An F32 tile that does not wrap around the ring
// and sits at a 4-byte aligned address is read in place. A row whose scores are not all finite is recomputed by
// the scalar path's row kernels (softmax.h's rules), as the decode path hands such rows to its fallback.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/attention_split.h"
#include "lib/attention/decode-inl.h"
#include "lib/common/fp_env.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/kv_cache/kv_cache_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(internal::kKvDecodeTile == kDecodeTile, "the cache's tile is the decode path's");

// binary16 bits (in 32-bit lanes) -> f32, exact, without float arithmetic on subnormals (ARMv7 NEON flushes
// them): the exponent is re-biased by an integer add; a subnormal half m 2^-24 is built as the normal float
// 2^-14 (1 + m/1024) and 2^-14 subtracted (exact: Sterbenz); infinities and NaNs get the float's all-ones exponent.
template <class D, class VU>
HWY_INLINE hn::Vec<D> HalfToFloat(D d, VU h) {
  const hn::RebindToUnsigned<D> du;
  const auto magnitude = hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x7FFFu)));
  const auto exponent = hn::And(magnitude, hn::Set(du, 0x0F800000u));
  auto bits = hn::Add(magnitude, hn::Set(du, 112u << 23));
  bits = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 0x0F800000u)), hn::Add(bits, hn::Set(du, 112u << 23)), bits);
  const auto subnormal = hn::Sub(hn::BitCast(d, hn::Add(bits, hn::Set(du, 1u << 23))),
                                 hn::BitCast(d, hn::Set(du, 113u << 23)));
  const auto f = hn::IfThenElse(hn::RebindMask(d, hn::Eq(exponent, hn::Zero(du))), subnormal, hn::BitCast(d, bits));
  return hn::Or(f, hn::BitCast(d, hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)))));
}

// width elements of a stored row (K or V of one kv head at one slot) as floats into dst.
template <class D>
HWY_INLINE void ConvertRow(D d, const internal::KvLayout& l, const unsigned char* storage, size_t slot, size_t g,
                           size_t which, float* dst) {
  const size_t N = hn::Lanes(d);
  const size_t width = which == 0 ? l.head_dim : l.value_dim;
  const size_t first = slot * (which == 0 ? l.k_row : l.v_row) + g * width;
  const unsigned char* base = storage + (which == 0 ? l.k_offset : l.v_offset);
  if (l.type == KvType::kF16 && reinterpret_cast<uintptr_t>(base) % 2 == 0) {
    const hn::Rebind<uint16_t, D> d16;
    const hn::RebindToUnsigned<D> du;
    const uint16_t* src = static_cast<const uint16_t*>(static_cast<const void*>(base)) + first;  // 2-aligned
    size_t c = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
    // F16C's vcvtph2ps: one exact instruction per vector (subnormals, infinities and NaNs included). Highway's
    // emulated PromoteTo on other targets turns infinities and NaNs into finite values: the integer code there.
    (void)du;
    const hn::Rebind<hwy::float16_t, D> dh;
    for (; c + N <= width; c += N) {
      hn::StoreU(hn::PromoteTo(d, hn::BitCast(dh, hn::LoadU(d16, src + c))), d, dst + c);
    }
#else
    for (; c + N <= width; c += N) hn::StoreU(HalfToFloat(d, hn::PromoteTo(du, hn::LoadU(d16, src + c))), d, dst + c);
#endif
    for (; c < width; ++c) dst[c] = internal::HalfBitsToFloat(src[c]);
    return;
  }
  if (l.type == KvType::kQ8) {
    const hn::Rebind<int8_t, D> d8;
    const hn::RebindToSigned<D> di;
    const int8_t* src = reinterpret_cast<const int8_t*>(base) + first;
    const float scale = internal::LoadScale(l, storage, slot, g, which);
    const auto vscale = hn::Set(d, scale);
    size_t c = 0;
    for (; c + N <= width; c += N) {
      hn::StoreU(hn::Mul(hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, src + c))), vscale), d, dst + c);
    }
    for (; c < width; ++c) dst[c] = static_cast<float>(src[c]) * scale;
    return;
  }
  internal::LoadHeadRow(l, storage, slot, g, which, dst);  // F32 (a copy), or f16 at an odd address
}

// K (which = 0) or V of kv head g for positions [t0, t0 + n): a pointer and a row stride, in place for an F32
// tile that does not wrap and is float-aligned, else converted into dst.
template <class D>
HWY_INLINE const float* TileRows(D d, const internal::KvAttentionProblem& p, size_t g, size_t which, size_t t0,
                                 size_t n, float* dst, size_t* stride) {
  const internal::KvLayout& l = p.layout;
  const size_t width = which == 0 ? l.head_dim : l.value_dim;
  const size_t slot0 = t0 % l.capacity;
  if (l.type == KvType::kF32 && slot0 + n <= l.capacity) {
    const unsigned char* base = p.storage + (which == 0 ? l.k_offset : l.v_offset);
    if (reinterpret_cast<uintptr_t>(base) % sizeof(float) == 0) {
      *stride = which == 0 ? l.k_row : l.v_row;
      // Aligned: checked above (a cast through void*: -Wcast-align cannot see the check).
      return static_cast<const float*>(static_cast<const void*>(base)) + slot0 * *stride + g * width;
    }
  }
  for (size_t j = 0; j < n; ++j) ConvertRow(d, l, p.storage, (t0 + j) % l.capacity, g, which, dst + j * width);
  *stride = width;
  return dst;
}

// ---- The call's structure (attention.h, the work split): per kv head g, the positions the call sees,
// [first_lo, last_hi), are cut into key chunks of kAttentionKeyChunk positions from first_lo when the call has
// several (fewer than kAttentionTiledMinQueries queries, more than a chunk of positions), else one chunk holding
// them all; a chunk's tiles of kDecodeTile positions start at multiples of kDecodeTile from first_lo, as without
// chunks. Each (query row, query head of the group) gets a partial result per chunk (decode-inl.h, DecodePartial),
// combined in chunk order by DecodeCombine, the single call's and AttentionCachedFinish's one combine.

// Where one call's rows keep their state: per (query row i, head r of the group), slot i * group + r.
struct KvRows {
  float* m;     // running max of the chunk's online softmax; NaN: a non-finite score met (the chunk is redone)
  float* lsum;  // running sum
  size_t i_begin, i_end;
};

// Rows [rows.i_begin, rows.i_end) of kv head g over the positions [cb, ce) of their chunk: each tile converted once,
// then for every row and head of the group the decode steps (scores, tile max, online softmax, P V into
// acc_of(i, r)); a row that meets a non-finite score is marked (m = NaN) and skipped.
template <class D, class AccOf>
HWY_INLINE void KvChunkTiles(D d, const internal::KvAttentionProblem& p, const float* q, size_t g, const KvRows& rows,
                             size_t first_lo, size_t cb, size_t ce, float* region, AccOf acc_of) {
  const internal::KvLayout& l = p.layout;
  const size_t dk = l.head_dim, dv = l.value_dim;
  const size_t tile = internal::KvMin(kDecodeTile, l.capacity);
  float* k_buf = region;
  float* v_buf = k_buf + tile * dk;
  float* s = v_buf + tile * dv;
  size_t rows_lo, rows_hi, unused;
  internal::KvVisible(p, rows.i_begin, &rows_lo, &unused);
  internal::KvVisible(p, rows.i_end - 1, &unused, &rows_hi);
  const size_t lo_all = rows_lo > cb ? rows_lo : cb, hi_all = rows_hi < ce ? rows_hi : ce;
  if (lo_all >= hi_all) return;
  // Tiles on the call's grid (multiples of kDecodeTile from first_lo), only those the rows see.
  const size_t t_first = first_lo + (lo_all - first_lo) / kDecodeTile * kDecodeTile;
  for (size_t t0 = t_first; t0 < hi_all; t0 += kDecodeTile) {
    const size_t t1 = hi_all - t0 < kDecodeTile ? hi_all : t0 + kDecodeTile;
    size_t k_stride, v_stride;
    const float* k_tile = TileRows(d, p, g, 0, t0, t1 - t0, k_buf, &k_stride);
    const float* v_tile = TileRows(d, p, g, 1, t0, t1 - t0, v_buf, &v_stride);
    for (size_t i = rows.i_begin; i < rows.i_end; ++i) {
      size_t lo, hi;
      internal::KvVisible(p, i, &lo, &hi);
      const size_t a = lo > t0 ? lo : t0, b = hi < t1 ? hi : t1;
      if (a >= b) continue;
      const size_t nb = b - a;
      for (size_t r = 0; r < p.group; ++r) {
        const size_t h = g * p.group + r;
        const size_t state = i * p.group + r;
        if (rows.m[state] != rows.m[state]) continue;  // NaN: a non-finite score met; redone after the chunk
        const float* q_row = q + (i * p.num_heads + h) * dk;
        DecodeScores(d, q_row, k_tile + (a - t0) * k_stride, k_stride, dk, nb, p.scale, s);
        const float tile_max = DecodeTileMax(d, s, nb);
        if (tile_max != tile_max) {
          rows.m[state] = internal::kQuietNaN;
          continue;
        }
        const bool rescale = rows.m[state] > -internal::kInfinity;  // not the row's first tile of the chunk
        const float alpha = DecodeSoftmaxStep(d, s, nb, tile_max, !rescale, rows.m[state], rows.lsum[state]);
        DecodePv(d, s, nb, v_tile + (a - t0) * v_stride, v_stride, acc_of(i, r), dv, alpha, rescale);
      }
    }
  }
}

// A chunk's partial of one row and head over positions [a, b) (a < b) in two passes, position by position: for a
// chunk with a non-finite score, and for every chunk under a directed rounding mode (the scalar exp steps its range
// reduction to nearest). scratch: b - a + max(head_dim, value_dim) floats.
template <class D>
HWY_NOINLINE DecodePartial KvChunkTwoPass(D d, const internal::KvAttentionProblem& p, const float* q_row, size_t g,
                                          size_t a, size_t b, float* scratch, float* acc) {
  const internal::KvLayout& l = p.layout;
  float* s = scratch;
  float* row = scratch + (b - a);
  DecodePartial r = EmptyPartial();
  float m = -internal::kInfinity;
  for (size_t j = a; j < b; ++j) {
    internal::LoadHeadRow(l, p.storage, j % l.capacity, g, 0, row);
    const float x = Dot(d, q_row, row, l.head_dim) * p.scale;
    s[j - a] = x;
    if (x != x) {
      r.nan = true;
      return r;
    }
    r.pinf += x == internal::kInfinity ? 1 : 0;
    m = x > m && x < internal::kInfinity ? x : m;
  }
  if (r.pinf == 0 && !(m > -internal::kInfinity)) return r;  // every score -inf
  internal::FillRow(acc, l.value_dim, 0.0f);
  float sum = 0.0f;
  for (size_t j = a; j < b; ++j) {
    const float x = s[j - a];
    if (r.pinf != 0 ? x != internal::kInfinity : x == -internal::kInfinity) continue;  // weight exactly 0
    const float w = r.pinf != 0 ? 1.0f : internal::ExpRr2P6Shifted(x - m, internal::TwoSumError(x, -m, x - m));
    sum += w;
    internal::LoadHeadRow(l, p.storage, j % l.capacity, g, 1, row);
    for (size_t c = 0; c < l.value_dim; ++c) acc[c] += w * row[c];
  }
  if (r.pinf == 0) {
    r.m = m;
    r.l = sum;
  }
  return r;
}

// The partial of row i, head r of kv head g over chunk [cb, ce) after KvChunkTiles: its online state, or, when
// marked, the two-pass result (acc rewritten).
template <class D>
HWY_INLINE DecodePartial KvChunkPartial(D d, const internal::KvAttentionProblem& p, const float* q, size_t g,
                                        const KvRows& rows, size_t i, size_t r, size_t cb, size_t ce, float* region,
                                        float* acc) {
  const size_t state = i * p.group + r;
  if (rows.m[state] == rows.m[state]) return DecodePartial{rows.m[state], rows.lsum[state], 0, false};
  size_t lo, hi;
  internal::KvVisible(p, i, &lo, &hi);
  const size_t a = lo > cb ? lo : cb, b = hi < ce ? hi : ce;
  const float* q_row = q + (i * p.num_heads + g * p.group + r) * p.layout.head_dim;
  return KvChunkTwoPass(d, p, q_row, g, a, b, region, acc);
}

inline void KvResetRows(const internal::KvAttentionProblem& p, const KvRows& rows, bool to_nearest) {
  // Under a directed mode every row is marked up front: KvChunkTiles skips it, KvChunkPartial runs the two passes.
  internal::FillRow(rows.m + rows.i_begin * p.group, (rows.i_end - rows.i_begin) * p.group,
                    to_nearest ? -internal::kInfinity : internal::kQuietNaN);
  internal::FillRow(rows.lsum + rows.i_begin * p.group, (rows.i_end - rows.i_begin) * p.group, 0.0f);
}

// The chunk grid of a validated call: first_lo, last_hi and the chunk count (attention_split.h, KeyChunks).
struct KvSpan {
  size_t first_lo, last_hi, chunks;
};

inline KvSpan KvSpanOf(const internal::KvAttentionProblem& p) {
  KvSpan sp;
  size_t unused;
  internal::KvVisible(p, 0, &sp.first_lo, &unused);
  internal::KvVisible(p, p.q_len - 1, &unused, &sp.last_hi);
  sp.chunks = internal::KeyChunks(p.q_len, sp.last_hi - sp.first_lo, false);
  return sp;
}

inline void KvChunkBounds(const KvSpan& sp, size_t c, size_t* cb, size_t* ce) {
  *cb = sp.first_lo + c * kAttentionKeyChunk;
  *ce = sp.chunks == 1 || sp.last_hi - *cb < kAttentionKeyChunk ? sp.last_hi : *cb + kAttentionKeyChunk;
  if (sp.chunks == 1) *cb = sp.first_lo;
}

// One chunk (the whole span) for rows [i_begin, i_end) of kv head g: the decode steps, rows with a non-finite score
// recomputed by the scalar path's row kernels (softmax.h's rules), the others divided by their sums.
inline void KvOneChunkRows(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws, size_t g,
                           size_t i_begin, size_t i_end) {
  const hn::ScalableTag<float> d;
  const size_t dv = p.layout.value_dim;
  const size_t n_state = p.q_len * p.group;
  const KvRows rows{ws, ws + n_state, i_begin, i_end};
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  const KvSpan sp = KvSpanOf(p);
  KvResetRows(p, rows, true);
  KvChunkTiles(d, p, q, g, rows, sp.first_lo, sp.first_lo, sp.last_hi, region,
               [&](size_t i, size_t r) { return out + (i * p.num_heads + g * p.group + r) * dv; });
  for (size_t i = i_begin; i < i_end; ++i) {
    for (size_t r = 0; r < p.group; ++r) {
      const size_t h = g * p.group + r;
      const size_t state = i * p.group + r;
      if (rows.m[state] != rows.m[state]) {
        internal::KvAttentionRowScalar(p, q, out, i, h, region);
      } else {
        DivideRow(d, out + (i * p.num_heads + h) * dv, dv, rows.lsum[state]);  // l >= 1: every row sees a key
      }
    }
  }
}

// Kv head g of a chunked call: chunk 0 into the output rows, each later chunk into the workspace's partial rows and
// combined, then every row finished.
inline void KvChunkedHead(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws, size_t g,
                          bool to_nearest) {
  const hn::ScalableTag<float> d;
  const size_t dv = p.layout.value_dim;
  const size_t n_state = p.q_len * p.group;
  const KvRows rows{ws, ws + n_state, 0, p.q_len};
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  float* combined = region + internal::KvWorkspaceFloatsOneChunk(p.q_len, p.group, p.layout.head_dim, dv,
                                                                 p.layout.capacity, p.layout.window) -
                    internal::KvStateFloats(p.q_len, p.group);
  float* acc = combined + internal::KvRound16(n_state * 4);
  const KvSpan sp = KvSpanOf(p);
  const auto out_row = [&](size_t i, size_t r) { return out + (i * p.num_heads + g * p.group + r) * dv; };
  const auto acc_row = [&](size_t i, size_t r) { return acc + (i * p.group + r) * dv; };
  for (size_t c = 0; c < sp.chunks; ++c) {
    size_t cb, ce;
    KvChunkBounds(sp, c, &cb, &ce);
    KvResetRows(p, rows, to_nearest);
    if (to_nearest && c == 0) {
      KvChunkTiles(d, p, q, g, rows, sp.first_lo, cb, ce, region, out_row);
    } else if (to_nearest) {
      KvChunkTiles(d, p, q, g, rows, sp.first_lo, cb, ce, region, acc_row);
    }
    for (size_t i = 0; i < p.q_len; ++i) {
      size_t lo, hi;
      internal::KvVisible(p, i, &lo, &hi);
      for (size_t r = 0; r < p.group; ++r) {
        float* st_slot = combined + (i * p.group + r) * internal::kPartialHeaderFloats;
        const bool seen = (lo > cb ? lo : cb) < (hi < ce ? hi : ce);
        const DecodePartial part = seen ? KvChunkPartial(d, p, q, g, rows, i, r, cb, ce, region,
                                                         c == 0 ? out_row(i, r) : acc_row(i, r))
                                        : EmptyPartial();
        if (c == 0) {
          StorePartial(part, st_slot);
          continue;
        }
        DecodePartial st = LoadPartial(st_slot);
        DecodeCombine(d, st, out_row(i, r), part, acc_row(i, r), dv);
        StorePartial(st, st_slot);
      }
    }
  }
  for (size_t i = 0; i < p.q_len; ++i) {
    for (size_t r = 0; r < p.group; ++r) {
      DecodeFinishRow(d, LoadPartial(combined + (i * p.group + r) * internal::kPartialHeaderFloats), out_row(i, r), dv);
    }
  }
}

inline void KvAttentionForward(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws) {
  const KvSpan sp = KvSpanOf(p);
  const bool to_nearest = internal::RoundsToNearest();
  if (sp.chunks > 1) {
    for (size_t g = 0; g < p.layout.heads; ++g) KvChunkedHead(p, q, out, ws, g, to_nearest);
    return;
  }
  // Under a directed rounding mode the decode steps' exp rounds its range reduction in that mode (attention.h):
  // as Attention does, such calls take the scalar row kernels, whose softmax steps it to nearest.
  if (HWY_UNLIKELY(!to_nearest)) return internal::KvAttentionScalar(p, q, out, ws);
  for (size_t g = 0; g < p.layout.heads; ++g) KvOneChunkRows(p, q, out, ws, g, 0, p.q_len);
}

// Part `part` of the cached call's split (attention_split.h over kv heads): rows of a row block of kv head g, or
// chunk c of kv head g (its partials into shared, chunk 0's rows into out).
inline void KvAttentionPartForward(const internal::KvAttentionProblem& p, size_t part, const float* q, float* out,
                                   float* shared, float* ws) {
  const hn::ScalableTag<float> d;
  const KvSpan sp = KvSpanOf(p);
  const internal::PartGrid grid =
      internal::MakePartGrid(p.layout.heads, p.q_len, sp.last_hi - sp.first_lo, false, p.causal);
  const internal::PartCoords pc = internal::PartOf(grid, part);
  const size_t g = pc.head;
  const bool to_nearest = internal::RoundsToNearest();
  const size_t dv = p.layout.value_dim;
  if (grid.chunks == 1) {
    if (HWY_UNLIKELY(!to_nearest)) {
      float* region = ws + internal::KvStateFloats(p.q_len, p.group);
      for (size_t i = pc.i_begin; i < pc.i_end; ++i) {
        for (size_t r = 0; r < p.group; ++r) internal::KvAttentionRowScalar(p, q, out, i, g * p.group + r, region);
      }
      return;
    }
    return KvOneChunkRows(p, q, out, ws, g, pc.i_begin, pc.i_end);
  }
  const internal::SharedLayout layout = internal::MakeSharedLayout(p.num_heads * p.q_len, grid.chunks, dv);
  const size_t n_state = p.q_len * p.group;
  const KvRows rows{ws, ws + n_state, 0, p.q_len};
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  size_t cb, ce;
  KvChunkBounds(sp, pc.chunk, &cb, &ce);
  const size_t c = pc.chunk;
  const auto acc_row = [&](size_t i, size_t r) {
    const size_t h = g * p.group + r;
    return c == 0 ? out + (i * p.num_heads + h) * dv : internal::PartialRow(layout, shared, h * p.q_len + i, c);
  };
  KvResetRows(p, rows, to_nearest);
  if (to_nearest) KvChunkTiles(d, p, q, g, rows, sp.first_lo, cb, ce, region, acc_row);
  for (size_t i = 0; i < p.q_len; ++i) {
    size_t lo, hi;
    internal::KvVisible(p, i, &lo, &hi);
    const bool seen = (lo > cb ? lo : cb) < (hi < ce ? hi : ce);
    for (size_t r = 0; r < p.group; ++r) {
      const size_t h = g * p.group + r;
      const DecodePartial part_result =
          seen ? KvChunkPartial(d, p, q, g, rows, i, r, cb, ce, region, acc_row(i, r)) : EmptyPartial();
      StorePartial(part_result, internal::PartialHeader(layout, shared, h * p.q_len + i, c));
    }
  }
}

inline void KvAttentionFinishForward(const internal::KvAttentionProblem& p, float* shared, float* out) {
  const KvSpan sp = KvSpanOf(p);
  if (sp.chunks <= 1) return;
  DecodeFinishChunks(p.num_heads, p.q_len, p.layout.value_dim,
                     internal::MakeSharedLayout(p.num_heads * p.q_len, sp.chunks, p.layout.value_dim), shared, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// SPDX-License-Identifier: Apache-2.0
// The KV cache's tiles (docs/performance.md, KV cache routes): per kv head g, the positions a chunk of the call sees
// in tiles of kDecodeTile logical positions, each tile's rows handed to the decode path's tile steps (decode-inl.h,
// DecodeTile) for every query row and query head of the group, by one of two readers:
//  - FusedTiles<Format> (route fused): the stored rows in place, read into registers in the cache's format (F16
//    converted exactly, Q8 as q * scale: the product Read returns), up to four query heads of the group sharing
//    each loaded K and V vector;
//  - ConvertedTiles (route converted): each tile's K and V rows converted to f32 in the workspace once (an F32 tile
//    that does not wrap and is 4-byte aligned is read in place), then one query head at a time.
// Both run the same steps with the same arithmetic per (query head, key), so they give the same bits, and an F32
// cache gives those of Attention's decode path on the same rows. Also the fallbacks a chunk's rows take: the two
// passes position by position (a non-finite score in a chunk of several, or a directed rounding mode).

#if defined(EDGEATTN_LIB_KV_CACHE_KV_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_TILES_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_TILES_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_TILES_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/attention_split.h"
#include "lib/attention/decode-inl.h"
#include "lib/attention/decode_chunks-inl.h"
#include "lib/common/formats-inl.h"
#include "lib/common/row_source.h"
#include "lib/dot/dot-inl.h"
#include "lib/kv_cache/kv_cache_scalar.h"
#include "lib/kv_cache/kv_cache_storage.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(internal::kKvDecodeTile == kDecodeTile, "the cache's tile is the decode path's");

// Route fused: no conversion; the tile steps read the storage. The scores of up to four heads at a time fill the
// workspace's tile region (kDecodeTile * (head_dim + value_dim + 1) floats): four when it holds four heads' scores.
template <class Format>
struct FusedTiles {
  using RowFormat = Format;
  static constexpr size_t kMaxHeads = 4;
  const internal::KvAttentionProblem& p;
  size_t g;
  size_t heads_max;
  TileShape shape;

  FusedTiles(const internal::KvAttentionProblem& problem, size_t kv_head, float* region)
      : p(problem), g(kv_head), heads_max(problem.layout.head_dim + problem.layout.value_dim + 1 >= 4 ? 4 : 2) {
    const internal::KvLayout& l = p.layout;
    shape = TileShape{l.head_dim, l.value_dim, p.scale, region, internal::KvMin(kDecodeTile, l.capacity)};
  }
  template <class D>
  void Load(D /*d*/, size_t /*t0*/, size_t /*n*/) {}
  internal::RowSource Keys(size_t a) const {
    return internal::KvRows(p.layout, p.storage, g, internal::KvSide::kKey, a);
  }
  internal::RowSource Values(size_t a) const {
    return internal::KvRows(p.layout, p.storage, g, internal::KvSide::kValue, a);
  }
};

// Route converted: each tile's rows as f32 in the workspace's tile region (K rows, V rows, then one head's scores).
struct ConvertedTiles {
  using RowFormat = F32Format;
  static constexpr size_t kMaxHeads = 1;
  const internal::KvAttentionProblem& p;
  size_t g;
  size_t heads_max = 1;
  TileShape shape;
  float* k_buf;
  float* v_buf;
  const float* k_tile = nullptr;
  const float* v_tile = nullptr;
  size_t k_stride = 0, v_stride = 0, t0 = 0;
  bool in_place_unaligned = false;  // KvPrefillLanes: reads rows element by element, so any float boundary does

  ConvertedTiles(const internal::KvAttentionProblem& problem, size_t kv_head, float* region) : p(problem), g(kv_head) {
    const internal::KvLayout& l = p.layout;
    const size_t tile = internal::KvMin(kDecodeTile, l.capacity);
    k_buf = region;
    v_buf = k_buf + tile * l.head_dim;
    shape = TileShape{l.head_dim, l.value_dim, p.scale, v_buf + tile * l.value_dim, 0};
  }

  // One side's rows of kv head g for positions [first, first + n): in place for an F32 tile that does not wrap and
  // whose rows all start on a vector boundary (any float boundary when in_place_unaligned), else converted into dst
  // (the workspace: aligned). Returns the rows and sets their stride (floats). The decode steps read whole vectors
  // of a row: from rows off a vector boundary each load splits across two cache lines, which made aligned-float F32
  // prefills 1.6-2.5x slower than a copy (docs/performance.md, "Prefill with narrow heads").
  template <class D>
  const float* SideRows(D d, internal::KvSide side, size_t first, size_t n, float* dst, size_t* stride) const {
    const internal::KvLayout& l = p.layout;
    const size_t slot0 = first % l.capacity;
    const unsigned char* row0 = p.storage + l.RowByte(slot0, g, side);
    const size_t vector_bytes = hn::Lanes(d) * sizeof(float) < 64 ? hn::Lanes(d) * sizeof(float) : 64;
    const size_t align = in_place_unaligned ? sizeof(float) : vector_bytes;
    if (l.type == KvType::kF32 && slot0 + n <= l.capacity && reinterpret_cast<uintptr_t>(row0) % align == 0 &&
        l.SlotElements(side) * sizeof(float) % align == 0) {
      *stride = l.SlotElements(side);
      return static_cast<const float*>(static_cast<const void*>(row0));  // aligned: checked above
    }
    const size_t width = l.Width(side);
    // The slots stepped: a division per row cost as much as a narrow row's conversion. (A loop per type through
    // lambdas cost the Cortex-M55 clang build 40 bytes of stack over the documented 1 KiB.)
    size_t slot = slot0;
    for (size_t j = 0; j < n; ++j) {
      const unsigned char* row = p.storage + l.RowByte(slot, g, side);
      if (l.type == KvType::kF16) {
        ConvertRow<F16Format>(d, row, width, 0.0f, dst + j * width);
      } else if (l.type == KvType::kQ8) {
        ConvertRow<Q8Format>(d, row, width, internal::LoadScale(l, p.storage, slot, g, side), dst + j * width);
      } else {
        ConvertRow<F32Format>(d, row, width, 0.0f, dst + j * width);
      }
      slot = slot + 1 == l.capacity ? 0 : slot + 1;
    }
    *stride = width;
    return dst;
  }
  template <class D>
  void Load(D d, size_t first, size_t n) {
    t0 = first;
    k_tile = SideRows(d, internal::KvSide::kKey, first, n, k_buf, &k_stride);
    v_tile = SideRows(d, internal::KvSide::kValue, first, n, v_buf, &v_stride);
  }
  internal::RowSource Keys(size_t a) const { return internal::PlainRows(k_tile + (a - t0) * k_stride, k_stride); }
  internal::RowSource Values(size_t a) const { return internal::PlainRows(v_tile + (a - t0) * v_stride, v_stride); }
};

// Where a route writes the rows of one kv head: row (i, r) (query row i, head r of the group) at
// base + i * stride_i + r * stride_r. One type for the output rows, a chunked head's accumulators and a split's
// partial rows, so that each reader's KvChunkTiles is compiled once per target, not once per caller (it is most of
// kv_cache.cc's compile time, which every build and every flag-matrix row pays).
struct KvRowGrid {
  float* base;
  size_t stride_i, stride_r;
  float* operator()(size_t i, size_t r) const { return base + i * stride_i + r * stride_r; }
};

// Where one call's rows keep their state: per (query row i, head r of the group), slot i * group + r.
struct KvRows {
  float* m;     // running max of the chunk's online softmax; NaN: a non-finite score met (the chunk is redone)
  float* lsum;  // running sum
  size_t i_begin, i_end;
};

// Rows [rows.i_begin, rows.i_end) of kv head g over the positions [cb, ce) of their chunk, tile by tile (tiles on the
// call's grid: multiples of kDecodeTile from first_lo, only those the rows see): the tile read once by the route's
// reader, then DecodeTile for each row's heads, into acc_of(i, r). A head that meets a non-finite score is marked
// (m = NaN) and skipped. Not inlined: its frame is off the stack when a caller then runs a row's scalar fallback
// (Cortex-M: the documented 1 KiB worst case).
template <class Kernels, class Reader, class D>
HWY_NOINLINE void KvChunkTiles(D d, const internal::KvAttentionProblem& p, const float* q, size_t g, const KvRows& rows,
                               size_t first_lo, size_t cb, size_t ce, float* region, const KvRowGrid& acc_of) {
  size_t rows_lo, rows_hi, unused;
  internal::KvVisible(p, rows.i_begin, &rows_lo, &unused);
  internal::KvVisible(p, rows.i_end - 1, &unused, &rows_hi);
  const size_t lo_all = rows_lo > cb ? rows_lo : cb, hi_all = rows_hi < ce ? rows_hi : ce;
  if (lo_all >= hi_all) return;
  constexpr size_t kHeads = Reader::kMaxHeads < Kernels::kFusedHeads ? Reader::kMaxHeads : Kernels::kFusedHeads;
  Reader reader(p, g, region);
  const size_t dk = p.layout.head_dim;
  for (size_t t0 = first_lo + (lo_all - first_lo) / kDecodeTile * kDecodeTile; t0 < hi_all; t0 += kDecodeTile) {
    const size_t t1 = hi_all - t0 < kDecodeTile ? hi_all : t0 + kDecodeTile;
    reader.Load(d, t0, t1 - t0);
    for (size_t i = rows.i_begin; i < rows.i_end; ++i) {
      size_t lo, hi;
      internal::KvVisible(p, i, &lo, &hi);
      const size_t a = lo > t0 ? lo : t0, b = hi < t1 ? hi : t1;
      if (a >= b) continue;
      const auto q_of = [&](size_t r) { return q + (i * p.num_heads + g * p.group + r) * dk; };
      const auto out_of = [&](size_t r) { return acc_of(i, r); };
      TileRow<decltype(q_of), decltype(out_of)> row{p.group, rows.m + i * p.group, rows.lsum + i * p.group, q_of,
                                                    out_of};
      DecodeTile<Kernels, typename Reader::RowFormat, kHeads>(d, row, reader.Keys(a), reader.Values(a), b - a,
                                                              reader.shape, reader.heads_max);
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
    internal::LoadHeadRow(l, p.storage, j % l.capacity, g, internal::KvSide::kKey, row);
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
    internal::LoadHeadRow(l, p.storage, j % l.capacity, g, internal::KvSide::kValue, row);
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

// Row i of query head h after its tiles: divided by its sum, or, when marked (m NaN: a non-finite score), recomputed
// by the scalar path's row kernels (softmax.h's rules). Every row sees a key, so l >= 1.
template <class D>
HWY_INLINE void KvFinishRow(D d, const internal::KvAttentionProblem& p, const float* q, float* out, float* region,
                            size_t i, size_t h, float m, float l) {
  if (m != m) return internal::KvAttentionRowScalar(p, q, out, i, h, region);
  DivideRow(d, out + (i * p.num_heads + h) * p.layout.value_dim, p.layout.value_dim, l);
}

inline void KvResetRows(const internal::KvAttentionProblem& p, const KvRows& rows, bool to_nearest) {
  // Under a directed mode every row is marked up front: KvChunkTiles skips it, KvChunkPartial runs the two passes.
  internal::FillRow(rows.m + rows.i_begin * p.group, (rows.i_end - rows.i_begin) * p.group,
                    to_nearest ? -internal::kInfinity : internal::kQuietNaN);
  internal::FillRow(rows.lsum + rows.i_begin * p.group, (rows.i_end - rows.i_begin) * p.group, 0.0f);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

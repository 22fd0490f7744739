// SPDX-License-Identifier: Apache-2.0
// Attention against a KV cache on Highway vectors: the route, chosen once per call before anything is written
// (ChooseKvRoute), then the call's structure over kv heads and key chunks (docs/performance.md, KV cache routes;
// docs/architecture.md). The tiles and their readers are kv_tiles-inl.h; the steps are the decode path's.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "hwy/highway.h"
#include "lib/attention/attention_split.h"
#include "lib/attention/decode-inl.h"
#include "lib/attention/decode_chunks-inl.h"
#include "lib/common/f16-inl.h"
#include "lib/common/fp_env.h"
#include "lib/common/q8_quantize-inl.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/kv_cache/kv_cache_scalar.h"
#include "lib/kv_cache/kv_pair_lanes-inl.h"
#include "lib/kv_cache/kv_prefill_lanes-inl.h"
#include "lib/kv_cache/kv_route.h"
#include "lib/kv_cache/kv_tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The route of a validated call with `chunks` key chunks (attention_split.h, KeyChunks) in the caller's rounding
// mode, from the problem alone:
//  - scalar_rows: a directed rounding mode, one chunk: the scalar path's row kernels, whose softmax steps its range
//    reduction to nearest (the decode steps' exp would round it in the caller's mode: attention.h's directed bound);
//  - two_pass: a directed mode, several chunks: every chunk position by position with an exp that steps its
//    reduction to nearest, so that the parts of the work split, each in its thread's mode, give the single call's bits;
//  - fused: decode steps (q_len < kAttentionTiledMinQueries) on storage aligned for its element type (a vector load
//    of floats or halves at a misaligned address is undefined behaviour), where the kernels read every format
//    (Kernels::kFormatsInRegisters: Highway's on targets with more than one lane, and the HELIUM backend's; not on
//    HWY_SCALAR, the other Cortex-M builds, where one lane shares nothing between heads and the kernels would add
//    tens of KiB of flash);
//  - converted: otherwise (prefill, misaligned storage, the one-lane target).
// fused and converted give the same bits; both run in key chunks when there are several.
template <class Kernels>
internal::KvRoute ChooseKvRoute(const internal::KvAttentionProblem& p, size_t chunks, bool to_nearest) {
  using internal::KvRoute;
  if (!to_nearest) return chunks > 1 ? KvRoute::kTwoPass : KvRoute::kScalarRows;
  const size_t align = internal::KvElementBytes(p.layout.type);
  if (Kernels::kFormatsInRegisters && p.q_len < kAttentionTiledMinQueries &&
      reinterpret_cast<uintptr_t>(p.storage) % align == 0) {
    return KvRoute::kFused;
  }
  return KvRoute::kConverted;
}

// The chunk grid of a validated call: first_lo, last_hi and the chunk count (attention_split.h, KeyChunks). Per kv
// head, the positions the call sees, [first_lo, last_hi), are cut into key chunks of kAttentionKeyChunk positions
// from first_lo when the call has several, else one chunk holding them all; a chunk's tiles start at multiples of
// kDecodeTile from first_lo, as without chunks, so where a ring keeps a position never changes a tile.
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

// KvChunkTiles on the reader of the route (fused or converted; fused in the cache's format): this picks the
// instantiation ChooseKvRoute named, nothing more; a prefill of narrow heads on the converted route takes
// KvPrefillLanes instead (kv_prefill_lanes-inl.h: the same contract, one query row and head per lane).
template <class Kernels, class D>
HWY_INLINE void KvRouteTiles(D d, internal::KvRoute route, const internal::KvAttentionProblem& p, const float* q,
                             size_t g, const KvRows& rows, size_t first_lo, size_t cb, size_t ce, float* region,
                             const KvRowGrid& acc_of) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if (route == internal::KvRoute::kConverted && PrefillLanesTake(p, cb, ce)) {
    if (p.layout.head_dim == 8) return KvPrefillLanes<8>(d, p, q, g, rows, first_lo, cb, ce, region, acc_of);
    return KvPrefillLanes<16>(d, p, q, g, rows, first_lo, cb, ce, region, acc_of);
  }
#endif
  if constexpr (Kernels::kFormatsInRegisters) {  // else never kFused, and the formats' kernels are not compiled
    if (route == internal::KvRoute::kFused) {
      switch (p.layout.type) {
        case KvType::kF16:
          return KvChunkTiles<Kernels, FusedTiles<F16Format>>(d, p, q, g, rows, first_lo, cb, ce, region, acc_of);
        case KvType::kQ8:
          return KvChunkTiles<Kernels, FusedTiles<Q8Format>>(d, p, q, g, rows, first_lo, cb, ce, region, acc_of);
        case KvType::kF32:
          return KvChunkTiles<Kernels, FusedTiles<F32Format>>(d, p, q, g, rows, first_lo, cb, ce, region, acc_of);
      }
    }
  }
  (void)route;
  KvChunkTiles<Kernels, ConvertedTiles>(d, p, q, g, rows, first_lo, cb, ce, region, acc_of);
}

// Rows [i_begin, i_end) of kv head g, one chunk (the whole span), route fused or converted: the tiles, then rows with a
// non-finite score recomputed by the scalar path's row kernels (softmax.h's rules), the others divided by their sums.
// Not inlined (nor KvChunkedHead): their frames stay out of the entry point's, for the Cortex-M stack budget.
template <class Kernels>
HWY_NOINLINE void KvOneChunkRows(internal::KvRoute route, const internal::KvAttentionProblem& p, const float* q,
                                 float* out, float* ws, size_t g, size_t i_begin, size_t i_end) {
  const hn::ScalableTag<float> d;
  const size_t dv = p.layout.value_dim;
  const KvRows rows{ws, ws + p.q_len * p.group, i_begin, i_end};
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  const KvSpan sp = KvSpanOf(p);
  KvResetRows(p, rows, true);
  const KvRowGrid out_rows{out + g * p.group * dv, p.num_heads * dv, dv};
  KvRouteTiles<Kernels>(d, route, p, q, g, rows, sp.first_lo, sp.first_lo, sp.last_hi, region, out_rows);
  for (size_t i = i_begin; i < i_end; ++i) {
    for (size_t r = 0; r < p.group; ++r) {
      KvFinishRow(d, p, q, out, region, i, g * p.group + r, rows.m[i * p.group + r], rows.lsum[i * p.group + r]);
    }
  }
}

// Kv head g of a chunked call (routes fused, converted: tiles; two_pass: none): chunk 0 into the output rows, each
// later chunk into the workspace's partial rows and combined, then every row finished.
template <class Kernels>
HWY_NOINLINE void KvChunkedHead(internal::KvRoute route, const internal::KvAttentionProblem& p, const float* q,
                                float* out, float* ws, size_t g) {
  const hn::ScalableTag<float> d;
  const size_t dv = p.layout.value_dim;
  const size_t n_state = p.q_len * p.group;
  const KvRows rows{ws, ws + n_state, 0, p.q_len};
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  float* combined =
      region +
      internal::KvWorkspaceFloatsOneChunk(p.q_len, p.group, p.layout.head_dim, dv, p.layout.capacity, p.layout.window) -
      internal::KvStateFloats(p.q_len, p.group);
  float* acc = combined + internal::KvRound16(n_state * 4);
  const KvSpan sp = KvSpanOf(p);
  const bool tiles = route != internal::KvRoute::kTwoPass;
  const KvRowGrid out_row{out + g * p.group * dv, p.num_heads * dv, dv};
  const KvRowGrid acc_row{acc, p.group * dv, dv};
  for (size_t c = 0; c < sp.chunks; ++c) {
    size_t cb, ce;
    KvChunkBounds(sp, c, &cb, &ce);
    KvResetRows(p, rows, tiles);
    if (tiles && c == 0) KvRouteTiles<Kernels>(d, route, p, q, g, rows, sp.first_lo, cb, ce, region, out_row);
    if (tiles && c != 0) KvRouteTiles<Kernels>(d, route, p, q, g, rows, sp.first_lo, cb, ce, region, acc_row);
    for (size_t i = 0; i < p.q_len; ++i) {
      size_t lo, hi;
      internal::KvVisible(p, i, &lo, &hi);
      for (size_t r = 0; r < p.group; ++r) {
        float* st_slot = combined + (i * p.group + r) * internal::kPartialHeaderFloats;
        const bool seen = (lo > cb ? lo : cb) < (hi < ce ? hi : ce);
        const DecodePartial part =
            seen ? KvChunkPartial(d, p, q, g, rows, i, r, cb, ce, region, c == 0 ? out_row(i, r) : acc_row(i, r))
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

// The scalar path's rows out of line: inlined, its frame would add to the SIMD rows' (Cortex-M stack budget).
HWY_NOINLINE void KvAttentionScalarRows(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws) {
  internal::KvAttentionScalar(p, q, out, ws);
}

// Why this is safe: the route is fixed before anything is written and completes the call on its own; a row that
// meets a non-finite score is finished inside its route (one chunk: the scalar row kernels; several: the chunk's
// two-pass partial carries the softmax rules).
template <class Kernels>
HWY_INLINE void KvAttentionForwardWith(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws) {
  const KvSpan sp = KvSpanOf(p);
  const internal::KvRoute route = ChooseKvRoute<Kernels>(p, sp.chunks, internal::RoundsToNearest());
  if (route == internal::KvRoute::kScalarRows) return KvAttentionScalarRows(p, q, out, ws);
  for (size_t g = 0; g < p.layout.heads; ++g) {
    if (sp.chunks > 1) {
      KvChunkedHead<Kernels>(route, p, q, out, ws, g);
      continue;
    }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    // Two kv heads at once (kv_pair_lanes-inl.h: the same bits); Highway's kernels only, not a backend's.
    if (std::is_same_v<Kernels, DecodeKernels> && g + 1 < p.layout.heads && PairLanesTake(p, route)) {
      KvPairRowsOfType(p, q, out, ws, g);
      ++g;
      continue;
    }
#endif
    KvOneChunkRows<Kernels>(route, p, q, out, ws, g, 0, p.q_len);
  }
}

// Rows [i_begin, i_end) of kv head g's query heads on the scalar path (a row block under a directed mode).
HWY_NOINLINE void KvScalarBlockRows(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws,
                                    size_t g, size_t i_begin, size_t i_end) {
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  for (size_t i = i_begin; i < i_end; ++i) {
    for (size_t r = 0; r < p.group; ++r) internal::KvAttentionRowScalar(p, q, out, i, g * p.group + r, region);
  }
}

// Chunk c of kv head g: every row's partial over the chunk into shared (chunk 0's rows into out). Not inlined: its
// frame stays off the row-block parts' path to the scalar fallback (Cortex-M stack budget).
template <class Kernels>
HWY_NOINLINE void KvChunkPart(internal::KvRoute route, const internal::KvAttentionProblem& p, const float* q,
                              float* out, float* shared, float* ws, size_t g, size_t c, size_t chunks) {
  const hn::ScalableTag<float> d;
  const KvSpan sp = KvSpanOf(p);
  const size_t dv = p.layout.value_dim;
  const internal::SharedLayout layout = internal::MakeSharedLayout(p.num_heads * p.q_len, chunks, dv);
  const KvRows rows{ws, ws + p.q_len * p.group, 0, p.q_len};
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  size_t cb, ce;
  KvChunkBounds(sp, c, &cb, &ce);
  // Chunk 0 into the output rows; chunk c > 0 into the partial rows, PartialRow(layout, shared, h * q_len + i, c)
  // for head h = g * group + r, which is affine in i and r.
  const KvRowGrid acc_row = c == 0 ? KvRowGrid{out + g * p.group * dv, p.num_heads * dv, dv}
                                   : KvRowGrid{internal::PartialRow(layout, shared, g * p.group * p.q_len, c),
                                               (chunks - 1) * dv, p.q_len * (chunks - 1) * dv};
  const bool tiles = route != internal::KvRoute::kTwoPass;
  KvResetRows(p, rows, tiles);
  if (tiles) KvRouteTiles<Kernels>(d, route, p, q, g, rows, sp.first_lo, cb, ce, region, acc_row);
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

// Part `part` of the cached call's split (attention_split.h over kv heads): rows of a row block of kv head g, or
// chunk c of kv head g (its partials into shared, chunk 0's rows into out). The route is chosen per part, in its
// thread's rounding mode, as the single call chooses it.
template <class Kernels>
HWY_INLINE void KvAttentionPartForwardWith(const internal::KvAttentionProblem& p, size_t part, const float* q,
                                           float* out, float* shared, float* ws) {
  const KvSpan sp = KvSpanOf(p);
  const internal::PartGrid grid =
      internal::MakePartGrid(p.layout.heads, p.q_len, sp.last_hi - sp.first_lo, false, p.causal);
  const internal::PartCoords pc = internal::PartOf(grid, part);
  const internal::KvRoute route = ChooseKvRoute<Kernels>(p, grid.chunks, internal::RoundsToNearest());
  if (grid.chunks > 1) return KvChunkPart<Kernels>(route, p, q, out, shared, ws, pc.head, pc.chunk, grid.chunks);
  if (route == internal::KvRoute::kScalarRows) return KvScalarBlockRows(p, q, out, ws, pc.head, pc.i_begin, pc.i_end);
  KvOneChunkRows<Kernels>(route, p, q, out, ws, pc.head, pc.i_begin, pc.i_end);
}

inline void KvAttentionFinishForward(const internal::KvAttentionProblem& p, float* shared, float* out) {
  const KvSpan sp = KvSpanOf(p);
  if (sp.chunks <= 1) return;
  DecodeFinishChunks(p.num_heads, p.q_len, p.layout.value_dim,
                     internal::MakeSharedLayout(p.num_heads * p.q_len, sp.chunks, p.layout.value_dim), shared, out);
}

// The entry points EDGEATTN_DISPATCH calls, on Highway's decode kernels; below, on a backend's (its DecodeKernels,
// or Highway's where it supplies none).
inline void KvAttentionForward(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws) {
  KvAttentionForwardWith<DecodeKernels>(p, q, out, ws);
}
inline void KvAttentionPartForward(const internal::KvAttentionProblem& p, size_t part, const float* q, float* out,
                                   float* shared, float* ws) {
  KvAttentionPartForwardWith<DecodeKernels>(p, part, q, out, shared, ws);
}
inline internal::KvRoute KvRouteOf(const internal::KvAttentionProblem& p) {
  return ChooseKvRoute<DecodeKernels>(p, KvSpanOf(p).chunks, internal::RoundsToNearest());
}

// ---- Append's stores. A Q8 cache: each kv head's row quantised on the widest vectors its width fills (the bits
// of the scalar rule: lib/common/q8_quantize-inl.h), not value by value (docs/performance.md, "The KV cache's
// Append").
inline void KvStoreQ8Side(const internal::KvLayout& l, unsigned char* storage, size_t slot, internal::KvSide side,
                          const float* src) {
  const size_t width = l.Width(side);
  for (size_t g = 0; g < l.heads; ++g) {
    int8_t* q = reinterpret_cast<int8_t*>(storage + l.RowByte(slot, g, side));
    const float scale = Q8QuantizeGroupSimd(src + g * width, width, q, nullptr);
    memcpy(storage + l.ScaleByte(slot, g, side), &scale, sizeof(scale));
  }
}

// internal::StorableValues on vectors (Append's check before it stores anything): the magnitude's bits against the
// type's rejected range, a vector at a time; the tail's zero padding is storable.
inline bool KvStorableValues(KvType type, const float* x, size_t n) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  return internal::StorableValues(type, x, n);
#else
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  // F16 rejects magnitudes in [kHalfOverflowBits, +inf), Q8 from +inf up. Highway 1.0.3 compares integers by Gt
  // and Lt only: a >= t is a > t - 1.
  const bool f16 = type == KvType::kF16;
  const auto low = hn::Set(di, static_cast<int32_t>(f16 ? internal::kHalfOverflowBits : 0x7F800000u) - 1);
  const auto infinity = hn::Set(di, 0x7F800000), magnitude = hn::Set(di, 0x7FFFFFFF);
  const auto rejected = [&](hn::VFromD<decltype(d)> v) HWY_ATTR {
    const auto a = hn::And(hn::BitCast(di, v), magnitude);
    auto bad = hn::Gt(a, low);
    if (f16) bad = hn::And(bad, hn::Lt(a, infinity));
    return !hn::AllFalse(di, bad);
  };
  size_t i = 0;
  for (; i + N <= n; i += N) {
    if (rejected(hn::LoadU(d, x + i))) return false;
  }
  return i == n || !rejected(LoadTail(d, x + i, n - i));
#endif
}

// An F16 cache's side: the slot's rows of every kv head are contiguous, converted as one row (FloatToHalfBits'
// bits, branch-free: lib/common/f16-inl.h).
inline void KvStoreF16Side(const internal::KvLayout& l, unsigned char* storage, size_t slot, internal::KvSide side,
                           const float* src) {
  StoreHalfRowIn(hn::ScalableTag<float>(), src, l.SlotElements(side), storage + l.RowByte(slot, 0, side));
}

// Positions first .. first + n - 1 of an F16 or Q8 cache from k [n][k_row] and v [n][v_row] (KvCache::Append's
// stores). Highway's emulated targets keep the scalar loop (StorePosition), which they would only slow down.
inline void KvStorePositions(const internal::KvLayout& l, unsigned char* storage, size_t first, size_t n,
                             const float* k, const float* v) {
  for (size_t j = 0; j < n; ++j) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
    internal::StorePosition(l, storage, first + j, k + j * l.k_row, v + j * l.v_row);
#else
    const size_t slot = (first + j) % l.capacity;
    if (l.type == KvType::kQ8) {
      KvStoreQ8Side(l, storage, slot, internal::KvSide::kKey, k + j * l.k_row);
      KvStoreQ8Side(l, storage, slot, internal::KvSide::kValue, v + j * l.v_row);
    } else {
      KvStoreF16Side(l, storage, slot, internal::KvSide::kKey, k + j * l.k_row);
      KvStoreF16Side(l, storage, slot, internal::KvSide::kValue, v + j * l.v_row);
    }
#endif
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#include "lib/common/backend-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace backend {

inline void KvAttentionForward(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws) {
  KvAttentionForwardWith<DecodeKernels>(p, q, out, ws);
}
inline void KvAttentionPartForward(const internal::KvAttentionProblem& p, size_t part, const float* q, float* out,
                                   float* shared, float* ws) {
  KvAttentionPartForwardWith<DecodeKernels>(p, part, q, out, shared, ws);
}
inline internal::KvRoute KvRouteOf(const internal::KvAttentionProblem& p) {
  return ChooseKvRoute<DecodeKernels>(p, KvSpanOf(p).chunks, internal::RoundsToNearest());
}

}  // namespace backend
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

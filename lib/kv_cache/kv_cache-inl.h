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
// Decode steps (q_len < kAttentionTiledMinQueries; storage aligned for its element type; not HWY_SCALAR) skip the
// conversion: kv_cache_fused-inl.h reads the stored bytes into registers per query row with the same arithmetic
// per query head, so they give the same bits (docs/performance.md, KV cache).

#if defined(EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/decode-inl.h"
#include "lib/common/fp_env.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/kv_cache/kv_cache_fused-inl.h"
#include "lib/kv_cache/kv_cache_load-inl.h"
#include "lib/kv_cache/kv_cache_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(internal::kKvDecodeTile == kDecodeTile, "the cache's tile is the decode path's");

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
    for (; c + N <= width && !KvQ8ScaleFlushes(scale); c += N) {
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

inline void KvAttentionForward(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws) {
  // Under a directed rounding mode the decode steps' exp rounds its range reduction in that mode (attention.h):
  // as Attention does, such calls take the scalar row kernels, whose softmax steps it to nearest.
  if (HWY_UNLIKELY(!internal::RoundsToNearest())) return internal::KvAttentionScalar(p, q, out, ws);
  const hn::ScalableTag<float> d;
  const internal::KvLayout& l = p.layout;
  const size_t dk = l.head_dim, dv = l.value_dim;
  const size_t rows = p.q_len * p.group;  // (query row, query head of the group) pairs
  float* m = ws;
  float* lsum = m + rows;
  float* region = ws + internal::KvStateFloats(p.q_len, p.group);
  const size_t tile = internal::KvMin(kDecodeTile, l.capacity);
  float* k_buf = region;
  float* v_buf = k_buf + tile * dk;
  float* s = v_buf + tile * dv;
  size_t first_lo, first_hi, last_lo, last_hi;
  internal::KvVisible(p, 0, &first_lo, &first_hi);
  internal::KvVisible(p, p.q_len - 1, &last_lo, &last_hi);
  const size_t fused = KvFusedHeads(p);  // decode steps: kv_cache_fused-inl.h, no conversion here
  for (size_t g = 0; g < l.heads; ++g) {
    internal::FillRow(m, rows, -internal::kInfinity);
    internal::FillRow(lsum, rows, 0.0f);
    for (size_t t0 = first_lo; t0 < last_hi; t0 += kDecodeTile) {
      const size_t t1 = last_hi - t0 < kDecodeTile ? last_hi : t0 + kDecodeTile;
      size_t k_stride = 0, v_stride = 0;
      const float* k_tile = fused ? nullptr : TileRows(d, p, g, 0, t0, t1 - t0, k_buf, &k_stride);
      const float* v_tile = fused ? nullptr : TileRows(d, p, g, 1, t0, t1 - t0, v_buf, &v_stride);
      for (size_t i = 0; i < p.q_len; ++i) {
        size_t lo, hi;
        internal::KvVisible(p, i, &lo, &hi);
        const size_t a = lo > t0 ? lo : t0, b = hi < t1 ? hi : t1;
        if (a >= b) continue;
        const size_t nb = b - a;
        if (fused) {
          KvFusedTileRowAny(d, p, q, out, g, i, a, nb, m + i * p.group, lsum + i * p.group, region, fused);
          continue;
        }
        for (size_t r = 0; r < p.group; ++r) {
          const size_t h = g * p.group + r;
          const size_t state = i * p.group + r;
          if (m[state] != m[state]) continue;  // NaN: a non-finite score met; recomputed at the end
          const float* q_row = q + (i * p.num_heads + h) * dk;
          float* out_row = out + (i * p.num_heads + h) * dv;
          DecodeScores(d, q_row, k_tile + (a - t0) * k_stride, k_stride, dk, nb, p.scale, s);
          const float tile_max = DecodeTileMax(d, s, nb);
          if (tile_max != tile_max) {
            m[state] = internal::kQuietNaN;
            continue;
          }
          const bool rescale = m[state] > -internal::kInfinity;  // not the row's first tile
          const float alpha = DecodeSoftmaxStep(d, s, nb, tile_max, !rescale, m[state], lsum[state]);
          DecodePv(d, s, nb, v_tile + (a - t0) * v_stride, v_stride, out_row, dv, alpha, rescale);
        }
      }
    }
    for (size_t i = 0; i < p.q_len; ++i) {
      for (size_t r = 0; r < p.group; ++r) {
        const size_t h = g * p.group + r;
        const size_t state = i * p.group + r;
        if (m[state] != m[state]) {
          internal::KvAttentionRowScalar(p, q, out, i, h, region);
        } else {
          DivideRow(d, out + (i * p.num_heads + h) * dv, dv, lsum[state]);  // l >= 1: every row sees a key
        }
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// KV cache storage: the layout of a cache's bytes, the f32 <-> binary16 conversions and the int8 quantisation.
// Shared by the scalar and the SIMD path: the stored bits come from this integer code only, so they are the same
// on every target (a target's own f32 -> f16 demotion may truncate, or flush subnormals).
#ifndef EDGEATTN_LIB_KV_CACHE_KV_CACHE_STORAGE_H_
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_STORAGE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "edgeattn/kv_cache.h"
#include "lib/common/bit_cast.h"
#include "lib/common/float_util.h"

namespace edgeattn {
namespace internal {

// ---- binary16 ----
// Finite floats with |x| >= 65520 round to infinity in binary16 (65504 is the largest half; 65520 the midpoint
// to the next binade); the cache rejects them instead.
constexpr uint32_t kHalfOverflowBits = 0x477FF000u;  // 65520.0f

// f32 -> binary16 bits, round to nearest, ties to even, with subnormal halves; NaN stays NaN (quiet, top payload
// bits kept), +-inf stays +-inf, values from 65520 up become infinity.
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t x = BitCastScalar<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) {
    return static_cast<uint16_t>(sign | 0x7C00u | (a > 0x7F800000u ? 0x0200u | ((a >> 13) & 0x03FFu) : 0u));
  }
  if (a >= kHalfOverflowBits) return static_cast<uint16_t>(sign | 0x7C00u);
  uint32_t mantissa, shift, q;
  if (a >= 0x38800000u) {  // >= 2^-14: a normal half. Re-bias the exponent (127 -> 15), keep 10 mantissa bits.
    mantissa = a & 0x007FFFFFu;
    shift = 13;
    q = (((a >> 23) - 112u) << 10) | (mantissa >> 13);
  } else {
    // A subnormal half counts units of 2^-24: the float's significand (with its implicit bit) shifted right by
    // 126 - exponent. Below 2^-25 (exponent < 102) everything rounds to 0, including float subnormals.
    const uint32_t e = a >> 23;
    if (e < 102) return static_cast<uint16_t>(sign);
    mantissa = (a & 0x007FFFFFu) | 0x00800000u;
    shift = 126 - e;  // 14 .. 24
    q = mantissa >> shift;
  }
  const uint32_t rest = mantissa & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  // A carry out of the mantissa moves into the exponent field, which is the correctly rounded result (also from
  // the largest subnormal to the smallest normal, and from 65504 + ... to infinity, excluded above).
  if (rest > half || (rest == half && (q & 1u) != 0)) ++q;
  return static_cast<uint16_t>(sign | q);
}

// binary16 bits -> f32, exact (every half is a float).
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x03FFu;
  if (e == 0x1F) return BitCastScalar<float>(sign | 0x7F800000u | (mantissa << 13));
  if (e != 0) return BitCastScalar<float>(sign | ((e + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return BitCastScalar<float>(sign);
  // Subnormal half m * 2^-24: normalise the significand into a normal float.
  uint32_t exponent = 113;  // 2^-14 with the leading bit at position 10
  while ((mantissa & 0x0400u) == 0) {
    mantissa <<= 1;
    --exponent;
  }
  return BitCastScalar<float>(sign | (exponent << 23) | ((mantissa & 0x03FFu) << 13));
}

// ---- int8 ----
// x rounded to the nearest integer, ties to even, for |x| < 2^31, in any rounding mode the caller has set (a
// magic-number addition would round in that mode): the conversion to int truncates in every mode, x minus its
// truncation is exact, and the comparison with 1/2 decides.
inline float RoundToNearestEven(float x) {
  const int32_t t = static_cast<int32_t>(x);
  const float frac = x - static_cast<float>(t);
  const float magnitude = frac < 0.0f ? -frac : frac;
  const bool away = magnitude > 0.5f || (magnitude == 0.5f && (t & 1) != 0);
  return static_cast<float>(away ? (x < 0.0f ? t - 1 : t + 1) : t);
}

// The Q8 scale of a row of n finite floats: max|x| / 127 (a float division); 0 for an all-zero row.
inline float Q8Scale(const float* x, size_t n) {
  float max_abs = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    max_abs = a > max_abs ? a : max_abs;
  }
  return max_abs / 127.0f;
}

// x / scale (a float division) rounded to nearest even and clamped to [-127, 127] (x / scale can exceed 127 by
// the rounding of the scale). The two divisions (here and in Q8Scale) round in the caller's rounding mode: the
// stored bits are the documented ones under round-to-nearest, and within the bound in every mode. A scale that underflowed to 0 (max |x| below about 2^-143) stores 0: the row reads
// back as 0, within the documented 2^-126 of x.
inline int8_t Q8Quantize(float x, float scale) {
  const float r = scale == 0.0f ? 0.0f : x / scale;
  const float c = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : RoundToNearestEven(r);
  return static_cast<int8_t>(c);
}

// ---- Layout ----
// Byte offsets of a validated cache's regions (see KvCacheStorageBytes).
struct KvLayout {
  KvType type;
  size_t heads, head_dim, value_dim, capacity, window;
  size_t element_bytes;
  size_t k_offset, v_offset, scale_offset;  // bytes from the start of the storage
  size_t k_row, v_row;                      // elements per slot: heads * head_dim, heads * value_dim
};

inline KvLayout MakeKvLayout(const KvCacheDesc& d) {
  KvLayout l;
  l.type = d.type;
  l.heads = d.num_kv_heads;
  l.head_dim = d.head_dim;
  l.value_dim = d.value_dim;
  l.capacity = d.capacity;
  l.window = d.window;
  l.element_bytes = KvElementBytes(d.type);
  l.k_row = d.num_kv_heads * d.head_dim;
  l.v_row = d.num_kv_heads * d.value_dim;
  l.k_offset = kKvHeaderBytes;
  l.v_offset = l.k_offset + d.capacity * l.k_row * l.element_bytes;
  l.scale_offset = l.v_offset + d.capacity * l.v_row * l.element_bytes;
  return l;
}

inline uint64_t LoadOldest(const void* storage) {
  uint64_t oldest;
  memcpy(&oldest, storage, sizeof(oldest));
  return oldest;
}

inline void StoreOldest(void* storage, uint64_t oldest) { memcpy(storage, &oldest, sizeof(oldest)); }

// Element e of slot s's K (kv head g's row starts at e = g * head_dim) or V, converted to float.
inline float LoadElement(const KvLayout& l, const unsigned char* region, size_t index) {
  switch (l.type) {
    case KvType::kF32: {
      float f;
      memcpy(&f, region + index * 4, sizeof(f));
      return f;
    }
    case KvType::kF16: {
      uint16_t h;
      memcpy(&h, region + index * 2, sizeof(h));
      return HalfBitsToFloat(h);
    }
    case KvType::kQ8:
      break;
  }
  int8_t q;
  memcpy(&q, region + index, sizeof(q));
  return static_cast<float>(q);  // times the scale, by the caller
}

// Scale of (slot, kv head g): which = 0 for K, 1 for V.
inline float LoadScale(const KvLayout& l, const unsigned char* storage, size_t slot, size_t g, size_t which) {
  float s;
  memcpy(&s, storage + l.scale_offset + ((slot * l.heads + g) * 2 + which) * sizeof(float), sizeof(s));
  return s;
}

// n = width floats of kv head g at the given slot of K (which = 0) or V (which = 1), dequantised into dst.
inline void LoadHeadRow(const KvLayout& l, const unsigned char* storage, size_t slot, size_t g, size_t which,
                        float* dst) {
  const size_t width = which == 0 ? l.head_dim : l.value_dim;
  const size_t row = which == 0 ? l.k_row : l.v_row;
  const unsigned char* base = storage + (which == 0 ? l.k_offset : l.v_offset);
  const size_t first = slot * row + g * width;
  if (l.type == KvType::kF32) {
    memcpy(dst, base + first * 4, width * sizeof(float));
    return;
  }
  if (l.type == KvType::kF16) {
    for (size_t c = 0; c < width; ++c) dst[c] = LoadElement(l, base, first + c);
    return;
  }
  const float scale = LoadScale(l, storage, slot, g, which);
  for (size_t c = 0; c < width; ++c) dst[c] = LoadElement(l, base, first + c) * scale;
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_KV_CACHE_KV_CACHE_STORAGE_H_

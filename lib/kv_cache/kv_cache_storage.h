// KV cache storage: the layout of a cache's bytes over the F16 and Q8 formats of lib/common (f16.h, q8.h).
// Shared by the scalar and the SIMD path: the stored bits come from that integer code only, so they are the same
// on every target.
#ifndef EDGEATTN_LIB_KV_CACHE_KV_CACHE_STORAGE_H_
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_STORAGE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "edgeattn/kv_cache.h"
#include "lib/common/bit_cast.h"
#include "lib/common/f16.h"
#include "lib/common/float_util.h"
#include "lib/common/q8.h"

namespace edgeattn {
namespace internal {

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

// SPDX-License-Identifier: Apache-2.0
// KV cache storage: where each row and each Q8 scale of a cache sits (the one place of that arithmetic), over the
// formats of lib/common (f16.h, q8.h). Shared by the scalar and the SIMD path: the stored bits come from that code
// (for Q8 also from its vector form, lib/common/q8_quantize-inl.h, which gives the same bits), so they are the same on
// every target.
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
#include "lib/common/row_source.h"

namespace edgeattn {
namespace internal {

// The keys or the values of a cache.
enum class KvSide : size_t { kKey = 0, kValue = 1 };

// ---- Layout ----
// Byte offsets of a validated cache's regions (see KvCacheStorageBytes).
struct KvLayout {
  KvType type;
  size_t heads, head_dim, value_dim, capacity, window;
  size_t element_bytes;
  size_t k_offset, v_offset, scale_offset;  // bytes from the start of the storage
  size_t k_row, v_row;                      // elements per slot: heads * head_dim, heads * value_dim

  size_t Width(KvSide side) const { return side == KvSide::kKey ? head_dim : value_dim; }
  size_t SlotElements(KvSide side) const { return side == KvSide::kKey ? k_row : v_row; }
  // Where (slot, kv head g)'s row of one side starts.
  size_t RowByte(size_t slot, size_t g, KvSide side) const {
    return (side == KvSide::kKey ? k_offset : v_offset) + (slot * SlotElements(side) + g * Width(side)) * element_bytes;
  }
  // Q8: where its float scale sits. The scales region is [capacity][heads][2]: K's, then V's.
  size_t ScaleByte(size_t slot, size_t g, KvSide side) const {
    return scale_offset + ((slot * heads + g) * 2 + static_cast<size_t>(side)) * sizeof(float);
  }
  size_t ScaleSlotBytes() const { return heads * 2 * sizeof(float); }
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

inline float LoadScale(const KvLayout& l, const unsigned char* storage, size_t slot, size_t g, KvSide side) {
  float s;
  memcpy(&s, storage + l.ScaleByte(slot, g, side), sizeof(s));
  return s;
}

// One side's rows of kv head g for the positions first, first + 1, ... as the decode steps read them (row j in slot
// (first + j) mod capacity; a call's positions are all held, so j < capacity).
inline RowSource KvRows(const KvLayout& l, const unsigned char* storage, size_t g, KvSide side, size_t first) {
  return RowSource{
      storage + l.RowByte(0, g, side),   l.SlotElements(side) * l.element_bytes,        first % l.capacity, l.capacity,
      storage + l.ScaleByte(0, g, side), l.type == KvType::kQ8 ? l.ScaleSlotBytes() : 0};
}

// The row of kv head g at the given slot of one side as floats into dst (Width(side) of them): what Read returns.
inline void LoadHeadRow(const KvLayout& l, const unsigned char* storage, size_t slot, size_t g, KvSide side,
                        float* dst) {
  const size_t width = l.Width(side);
  const unsigned char* row = storage + l.RowByte(slot, g, side);
  switch (l.type) {
    case KvType::kF32:
      memcpy(dst, row, width * sizeof(float));
      return;
    case KvType::kF16:
      for (size_t c = 0; c < width; ++c) dst[c] = LoadHalfElement(row, c);
      return;
    case KvType::kQ8:
      break;
  }
  const float scale = LoadScale(l, storage, slot, g, side);
  for (size_t c = 0; c < width; ++c) dst[c] = LoadQ8Element(row, c, scale);
}

// Stores one side's rows of a position (src: [heads][Width(side)] floats) in its slot, in the cache's format.
inline void StoreSide(const KvLayout& l, unsigned char* storage, size_t slot, KvSide side, const float* src) {
  const size_t width = l.Width(side);
  unsigned char* dst = storage + l.RowByte(slot, 0, side);
  switch (l.type) {
    case KvType::kF32:
      memcpy(dst, src, l.SlotElements(side) * sizeof(float));
      return;
    case KvType::kF16:
      StoreHalfRow(src, l.SlotElements(side), dst);
      return;
    case KvType::kQ8:
      break;
  }
  for (size_t g = 0; g < l.heads; ++g) {
    const float scale = Q8Scale(src + g * width, width);
    for (size_t c = 0; c < width; ++c) {
      const int8_t q = Q8Quantize(src[g * width + c], scale);  // Q8QuantizeGroup's values, stored byte by byte
      memcpy(dst + g * width + c, &q, sizeof(q));
    }
    memcpy(storage + l.ScaleByte(slot, g, side), &scale, sizeof(scale));
  }
}

// Values a cache of this type cannot store: F16 finite |x| >= 65520 (would become infinity), Q8 non-finite.
inline bool StorableValues(KvType type, const float* x, size_t n) {
  if (type == KvType::kF16) {
    for (size_t i = 0; i < n; ++i) {
      const uint32_t a = BitCastScalar<uint32_t>(x[i]) & 0x7FFFFFFFu;
      if (a >= kHalfOverflowBits && a < 0x7F800000u) return false;
    }
  } else if (type == KvType::kQ8) {
    for (size_t i = 0; i < n; ++i) {
      if (!IsFinite(x[i])) return false;
    }
  }
  return true;
}

// Stores position `position`'s K and V rows (k_src [heads][head_dim], v_src [heads][value_dim]) in its slot.
inline void StorePosition(const KvLayout& l, unsigned char* storage, size_t position, const float* k_src,
                          const float* v_src) {
  const size_t slot = position % l.capacity;
  StoreSide(l, storage, slot, KvSide::kKey, k_src);
  StoreSide(l, storage, slot, KvSide::kValue, v_src);
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_KV_CACHE_KV_CACHE_STORAGE_H_

// SPDX-License-Identifier: Apache-2.0
// Where the decode steps read a tile's rows (lib/attention/decode-inl.h): plain f32 rows with a stride (Attention's
// K and V, a tile converted into the workspace) or the rows of one KV head in a cache's storage, in that cache's
// format (lib/common/f32-inl.h, f16-inl.h, q8-inl.h), with a ring's wrap and Q8's per-row scales. Plain arithmetic,
// the same on every target.
#ifndef EDGEATTN_LIB_COMMON_ROW_SOURCE_H_
#define EDGEATTN_LIB_COMMON_ROW_SOURCE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace edgeattn {
namespace internal {

// Row j of a tile (j < the tile's rows <= capacity) sits in slot (slot0 + j) mod capacity: a tile's rows wrap around a
// ring at most once, so the kernels walk them as two runs of consecutive slots, [0, Wrap(n)) and [Wrap(n), n).
struct RowSource {
  const unsigned char* base;   // element 0 of slot 0's row
  size_t row_bytes;            // from one slot's row to the next
  size_t slot0, capacity;      // plain rows: slot0 0, capacity SIZE_MAX (never wraps)
  const unsigned char* scale;  // a scaled format's (Q8) float scale of slot 0's row; unread otherwise
  size_t scale_bytes;          // from one slot's scale to the next

  size_t Slot(size_t j) const { return slot0 + j < capacity ? slot0 + j : slot0 + j - capacity; }
  const unsigned char* Row(size_t j) const { return base + Slot(j) * row_bytes; }
  const unsigned char* ScalePtr(size_t j) const { return scale + Slot(j) * scale_bytes; }
  float Scale(size_t j) const {
    float s;
    memcpy(&s, ScalePtr(j), sizeof(s));
    return s;
  }
  // Rows j .. j + count - 1 (count <= capacity) into r: by strides from Row(j) unless the ring wraps among them.
  void Rows(size_t j, size_t count, const unsigned char** r) const {
    const size_t slot = Slot(j);
    if (slot + count <= capacity) {
      for (size_t t = 0; t < count; ++t) r[t] = base + (slot + t) * row_bytes;
    } else {
      for (size_t t = 0; t < count; ++t) r[t] = Row(j + t);
    }
  }
  // Scales of rows j .. j + count - 1 (count <= capacity) into sc, as Rows walks them (a scaled format only).
  void Scales(size_t j, size_t count, float* sc) const {
    const size_t slot = Slot(j);
    if (slot + count <= capacity) {
      const unsigned char* p = scale + slot * scale_bytes;
      for (size_t t = 0; t < count; ++t, p += scale_bytes) memcpy(sc + t, p, sizeof(float));
    } else {
      for (size_t t = 0; t < count; ++t) sc[t] = Scale(j + t);
    }
  }
  // The first of n rows in slot 0 (n if none).
  size_t Wrap(size_t n) const { return slot0 + n > capacity ? capacity - slot0 : n; }
  // The same rows from row j on.
  RowSource From(size_t j) const {
    RowSource r = *this;
    r.slot0 = Slot(j);
    return r;
  }
};

// Rows of floats, row j at rows + j * stride.
inline RowSource PlainRows(const float* rows, size_t stride) {
  return RowSource{static_cast<const unsigned char*>(static_cast<const void*>(rows)),
                   stride * sizeof(float),
                   0,
                   SIZE_MAX,
                   nullptr,
                   0};
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_ROW_SOURCE_H_

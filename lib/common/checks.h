// SPDX-License-Identifier: Apache-2.0
// Argument checks shared by the scalar and SIMD entry points of every kernel.
#ifndef EDGEATTN_LIB_COMMON_CHECKS_H_
#define EDGEATTN_LIB_COMMON_CHECKS_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/status.h"

#ifdef __FAST_MATH__
#error "edgeattn relies on IEEE semantics (2Sum, magic-number rounding, NaN checks): do not build it with -ffast-math"
#endif

namespace edgeattn {
namespace internal {

// bytes = a * b * c * sizeof(float); false if that overflows size_t.
inline bool FloatBytes(size_t a, size_t b, size_t c, size_t* bytes) {
  size_t n = a;
  if (b != 0 && n > SIZE_MAX / b) return false;
  n *= b;
  if (c != 0 && n > SIZE_MAX / c) return false;
  n *= c;
  if (n > SIZE_MAX / sizeof(float)) return false;
  *bytes = n * sizeof(float);
  return true;
}

// Half-open byte range of an array. Compared as integers: relational operators on pointers into different
// objects are unspecified in C++.
struct ByteRange {
  uintptr_t begin;
  uintptr_t end;
};

inline ByteRange RangeOf(const void* p, size_t bytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = begin + bytes;
  return ByteRange{begin, end < begin ? UINTPTR_MAX : end};
}

// Whether two ranges share a byte. Empty ranges (null optional inputs) share nothing.
inline bool Overlap(ByteRange a, ByteRange b) {
  return a.begin != a.end && b.begin != b.end && a.begin < b.end && b.begin < a.end;
}

// Overlap other than exact aliasing (same start, same length).
inline bool PartialOverlap(ByteRange a, ByteRange b) {
  return Overlap(a, b) && !(a.begin == b.begin && a.end == b.end);
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_CHECKS_H_

// SPDX-License-Identifier: Apache-2.0
// The F32 storage format on Highway vectors: float32 as given. One of the three formats the decode steps are
// written over (lib/common/formats-inl.h has the interface; f16-inl.h and q8-inl.h the others).

#if defined(EDGEATTN_LIB_COMMON_F32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_F32_INL_H_
#undef EDGEATTN_LIB_COMMON_F32_INL_H_
#else
#define EDGEATTN_LIB_COMMON_F32_INL_H_
#endif

#include <stddef.h>
#include <string.h>

#include "hwy/highway.h"
#include "lib/common/simd_tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct F32Format {
  static constexpr size_t kBytes = 4;      // per element
  static constexpr bool kScaled = false;   // no per-row scale
  static constexpr size_t kAlignment = 4;  // of a row's address, for Load
  static float Element(const unsigned char* row, size_t e, float /*scale*/) {
    float f;
    memcpy(&f, row + 4 * e, sizeof(f));
    return f;
  }
  static bool VectorLoads(float /*scale*/) { return true; }
  // Lanes(d) elements from column c (row 4-byte aligned: a cast through void*, which -Wcast-align cannot check).
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const unsigned char* row, size_t c, hn::Vec<D> /*vscale*/) {
    return hn::LoadU(d, static_cast<const float*>(static_cast<const void*>(row)) + c);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> LoadPartial(D d, const unsigned char* row, size_t c, size_t lanes, float /*scale*/) {
    return LoadTail(d, static_cast<const float*>(static_cast<const void*>(row)) + c, lanes);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

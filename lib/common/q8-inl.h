// SPDX-License-Identifier: Apache-2.0
// The Q8 storage format on Highway vectors (the quantiser and the scalar read are lib/common/q8.h): int8 values
// widened to floats and multiplied by their row's scale in registers, the float product q * scale that the scalar
// read gives, lane by lane. Shared by the KV cache and the int8 weights.

#if defined(EDGEATTN_LIB_COMMON_Q8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_Q8_INL_H_
#undef EDGEATTN_LIB_COMMON_Q8_INL_H_
#else
#define EDGEATTN_LIB_COMMON_Q8_INL_H_
#endif

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/common/q8.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/common/vector_unit-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes(d) int8 values at q as floats times vscale: int8 -> int32 -> f32 (exact), then one product per lane.
template <class D>
HWY_INLINE hn::Vec<D> LoadQ8(D d, const int8_t* q, hn::Vec<D> vscale) {
  const hn::Rebind<int8_t, D> d8;
  const hn::RebindToSigned<D> di;
  return hn::Mul(hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, q))), vscale);
}

struct Q8Format {
  static constexpr size_t kBytes = 1;
  static constexpr bool kScaled = true;  // one float scale per row
  static constexpr size_t kAlignment = 1;
  static float Element(const unsigned char* row, size_t e, float scale) {
    return internal::LoadQ8Element(row, e, scale);
  }
  // A vector unit that flushes subnormal operands (kVectorFlushesSubnormals) would turn q * scale into 0 for a
  // subnormal scale (a row whose max |x| is below 127 * 2^-126) where the scalar product keeps it: such rows are
  // read element by element there.
  static bool VectorLoads(float scale) { return !(kVectorFlushesSubnormals && scale != 0.0f && scale < FLT_MIN); }
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const unsigned char* row, size_t c, hn::Vec<D> vscale) {
    return LoadQ8(d, reinterpret_cast<const int8_t*>(row) + c, vscale);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> LoadPartial(D d, const unsigned char* row, size_t c, size_t lanes, float scale) {
    return LoadElements<Q8Format>(d, row, c, lanes, scale);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

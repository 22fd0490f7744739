// SPDX-License-Identifier: Apache-2.0
// Loads and stores of the first `count` < Lanes(d) elements, never touching memory past them.
//
// Highway 1.0.3's MaskedLoad is a full-vector load on SSSE3/SSE4/NEON/EMU128/SCALAR and its BlendedStore is a
// full-vector load-blend-store on NEON: both reach past the end of the array (a fault at a page boundary, an
// AddressSanitizer report, a data race on the neighbouring bytes). Only AVX2, AVX-512, SVE and RVV have true
// masked memory operations (masked-off lanes are neither accessed nor able to fault); every other target goes
// through a one-vector stack buffer, sized by the tag (at most 64 bytes on those targets).

#if defined(EDGEATTN_LIB_COMMON_SIMD_TAIL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_SIMD_TAIL_INL_H_
#undef EDGEATTN_LIB_COMMON_SIMD_TAIL_INL_H_
#else
#define EDGEATTN_LIB_COMMON_SIMD_TAIL_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/common/stack_vector.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_SVE || \
    HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128 || HWY_TARGET == HWY_RVV
#define EDGEATTN_NATIVE_MASKED_MEMORY 1
#else
#define EDGEATTN_NATIVE_MASKED_MEMORY 0
#endif

// Lanes [0, count) from p, the others zero.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE hn::VFromD<D> LoadTail(D d, const T* HWY_RESTRICT p, size_t count) {
#if EDGEATTN_NATIVE_MASKED_MEMORY
  return hn::MaskedLoad(hn::FirstN(d, count), d, p);
#else
  HWY_ALIGN T buf[hn::MaxLanes(D())] = {};
  static_assert(sizeof(buf) <= internal::kMaxStackVectorBytes, "tail buffer larger than one bounded vector");
  for (size_t i = 0; i < count; ++i) buf[i] = p[i];
  return hn::Load(d, buf);
#endif
}

// Writes lanes [0, count) of v to p and nothing else.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE void StoreTail(D d, hn::VFromD<D> v, T* HWY_RESTRICT p, size_t count) {
#if EDGEATTN_NATIVE_MASKED_MEMORY
  hn::BlendedStore(v, hn::FirstN(d, count), d, p);
#else
  HWY_ALIGN T buf[hn::MaxLanes(D())];
  static_assert(sizeof(buf) <= internal::kMaxStackVectorBytes, "tail buffer larger than one bounded vector");
  hn::Store(v, d, buf);
  for (size_t i = 0; i < count; ++i) p[i] = buf[i];
#endif
}

// Lanes [0, count) (count <= Lanes(d)) as Format::Element(row, c + i, scale), the others zero: a stored row's
// elements converted one by one (lib/common/formats-inl.h), through the same bounded one-vector buffer.
template <class Format, class D>
HWY_INLINE hn::VFromD<D> LoadElements(D d, const unsigned char* row, size_t c, size_t count, float scale) {
  HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(D())] = {};
  static_assert(sizeof(buf) <= internal::kMaxStackVectorBytes, "tail buffer larger than one bounded vector");
  for (size_t i = 0; i < count; ++i) buf[i] = Format::Element(row, c + i, scale);
  return hn::Load(d, buf);
}

#undef EDGEATTN_NATIVE_MASKED_MEMORY

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

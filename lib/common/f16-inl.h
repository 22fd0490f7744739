// SPDX-License-Identifier: Apache-2.0
// The F16 storage format on Highway vectors (the scalar conversions are lib/common/f16.h): a vector of halves
// converted to floats exactly, by F16C's vcvtph2ps on x86 and by integer operations elsewhere.

#if defined(EDGEATTN_LIB_COMMON_F16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_F16_INL_H_
#undef EDGEATTN_LIB_COMMON_F16_INL_H_
#else
#define EDGEATTN_LIB_COMMON_F16_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/common/f16.h"
#include "lib/common/simd_tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// binary16 bits (in 32-bit lanes) -> f32, exact, without float arithmetic on subnormals (a vector unit may flush
// them, lib/common/vector_unit-inl.h): the exponent is re-biased by an integer add; a subnormal half m 2^-24 is
// built as the normal float 2^-14 (1 + m/1024) and 2^-14 subtracted (exact: Sterbenz); infinities and NaNs get the
// float's all-ones exponent.
template <class D, class VU>
HWY_INLINE hn::Vec<D> HalfToFloat(D d, VU h) {
  const hn::RebindToUnsigned<D> du;
  const auto magnitude = hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x7FFFu)));
  const auto exponent = hn::And(magnitude, hn::Set(du, 0x0F800000u));
  auto bits = hn::Add(magnitude, hn::Set(du, 112u << 23));
  bits = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 0x0F800000u)), hn::Add(bits, hn::Set(du, 112u << 23)), bits);
  const auto subnormal =
      hn::Sub(hn::BitCast(d, hn::Add(bits, hn::Set(du, 1u << 23))), hn::BitCast(d, hn::Set(du, 113u << 23)));
  const auto f = hn::IfThenElse(hn::RebindMask(d, hn::Eq(exponent, hn::Zero(du))), subnormal, hn::BitCast(d, bits));
  return hn::Or(f, hn::BitCast(d, hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)))));
}

// Lanes(d) halves at p (2-byte aligned) as floats.
template <class D>
HWY_INLINE hn::Vec<D> LoadHalves(D d, const uint16_t* p) {
  const hn::Rebind<uint16_t, D> d16;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
  // F16C's vcvtph2ps: one exact instruction per vector (subnormals, infinities and NaNs included). Highway's
  // emulated PromoteTo on other targets turns infinities and NaNs into finite values: the integer code there.
  const hn::Rebind<hwy::float16_t, D> dh;
  return hn::PromoteTo(d, hn::BitCast(dh, hn::LoadU(d16, p)));
#else
  return HalfToFloat(d, hn::PromoteTo(hn::RebindToUnsigned<D>(), hn::LoadU(d16, p)));
#endif
}

struct F16Format {
  static constexpr size_t kBytes = 2;
  static constexpr bool kScaled = false;
  static constexpr size_t kAlignment = 2;
  static float Element(const unsigned char* row, size_t e, float /*scale*/) {
    return internal::LoadHalfElement(row, e);
  }
  static bool VectorLoads(float /*scale*/) { return true; }
  // Lanes(d) elements from column c (row 2-byte aligned: a cast through void*, which -Wcast-align cannot check).
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const unsigned char* row, size_t c, hn::Vec<D> /*vscale*/) {
    return LoadHalves(d, static_cast<const uint16_t*>(static_cast<const void*>(row)) + c);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> LoadPartial(D d, const unsigned char* row, size_t c, size_t lanes, float scale) {
    return LoadElements<F16Format>(d, row, c, lanes, scale);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

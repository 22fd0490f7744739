// SPDX-License-Identifier: Apache-2.0
// The F16 storage format on Highway vectors (the scalar conversions are lib/common/f16.h): a vector of halves
// converted to floats exactly, by F16C's vcvtph2ps on x86, by VCVTB in the one lane of Highway's SCALAR target on
// Cortex-M FPUs and by integer operations elsewhere; and floats converted to halves by the integer steps of
// FloatToHalfBits, branch-free (the same bits in every rounding mode).

#if defined(EDGEATTN_LIB_COMMON_F16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_F16_INL_H_
#undef EDGEATTN_LIB_COMMON_F16_INL_H_
#else
#define EDGEATTN_LIB_COMMON_F16_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "lib/common/f16.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/common/stack_vector.h"

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
#elif HWY_TARGET == HWY_SCALAR && EDGEATTN_HAS_M_PROFILE_FPU
  // One lane on a Cortex-M FPU: the scalar conversion's VCVTB (lib/common/f16.h), not the integer lanes below.
  (void)d16;
  return hn::Set(d, internal::HalfBitsToFloat(*p));
#else
  return HalfToFloat(d, hn::PromoteTo(hn::RebindToUnsigned<D>(), hn::LoadU(d16, p)));
#endif
}

// Lanes shifted by per-lane counts: Highway 1.0.3 has operators for this on fixed-size vectors and only the named
// Shl and Shr on SVE's and RVV's sizeless types.
template <class V>
HWY_INLINE V ShiftLeftByLane(V v, V bits) {
#if HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128 || \
    HWY_TARGET == HWY_RVV
  return hn::Shl(v, bits);
#else
  return v << bits;
#endif
}
template <class V>
HWY_INLINE V ShiftRightByLane(V v, V bits) {
#if HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128 || \
    HWY_TARGET == HWY_RVV
  return hn::Shr(v, bits);
#else
  return v >> bits;
#endif
}

// f32 -> binary16 bits (in 32-bit lanes), FloatToHalfBits lane by lane, in integer operations only. Each case is
// computed in every lane and the lane's case selected: infinities and NaNs (the payload's top bits kept, quiet),
// finite values from 65520 up (+-inf), normal halves (the exponent re-biased, the mantissa rounded to nearest even
// by adding 0xFFF and the bit above the cut: a carry moves into the exponent, which is the correct result), and
// subnormal halves (the significand with its implicit bit shifted right by 126 - exponent, capped at 25, where
// every value rounds to 0, rounded the same way).
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> FloatToHalfBitsVec(D d, hn::Vec<D> x) {
  (void)d;
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(du, x);
  const auto one = hn::Set(du, 1u);
  const auto a = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
  const auto lsb = hn::And(hn::ShiftRight<13>(a), one);
  const auto normal =
      hn::Sub(hn::ShiftRight<13>(hn::Add(a, hn::Add(hn::Set(du, 0x0FFFu), lsb))), hn::Set(du, 112u << 10));
  const auto significand = hn::Or(hn::And(a, hn::Set(du, 0x007FFFFFu)), hn::Set(du, 0x00800000u));
  // 126 - e wraps to a large count where e > 126; those lanes take another case.
  const auto shift = hn::Min(hn::Sub(hn::Set(du, 126u), hn::ShiftRight<23>(a)), hn::Set(du, 25u));
  const auto half_less_one = hn::Sub(ShiftLeftByLane(one, hn::Sub(shift, one)), one);
  const auto sub_lsb = hn::And(ShiftRightByLane(significand, shift), one);
  const auto subnormal = ShiftRightByLane(hn::Add(significand, hn::Add(half_less_one, sub_lsb)), shift);
  const auto nan_bits = hn::Or(hn::Set(du, 0x0200u), hn::And(hn::ShiftRight<13>(a), hn::Set(du, 0x03FFu)));
  const auto ai = hn::BitCast(di, a);
  const auto nan = hn::Gt(ai, hn::Set(di, 0x7F800000));
  // Highway 1.0.3 compares integers by Gt and Lt only: a >= t is a > t - 1.
  auto h = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ai, hn::Set(di, 0x38800000 - 1))), normal, subnormal);
  // From 65520 up, +-inf included: 0x7C00; NaNs then get their payload.
  h = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ai, hn::Set(di, static_cast<int32_t>(internal::kHalfOverflowBits) - 1))),
                     hn::Set(du, 0x7C00u), h);
  h = hn::IfThenElse(hn::RebindMask(du, nan), hn::Or(hn::Set(du, 0x7C00u), nan_bits), h);
  return hn::Or(h, hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u)));
}

// n floats stored as halves at dst (any address): StoreHalfRow's bits. Whole vectors go through a lane buffer and a
// copy (dst may be odd); the last partial vector's lanes too.
template <class D>
HWY_INLINE void StoreHalfRowIn(D d, const float* HWY_RESTRICT x, size_t n, unsigned char* HWY_RESTRICT dst) {
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToSigned<D> di;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN uint16_t halves[hn::MaxLanes(D())];
  static_assert(sizeof(halves) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  size_t e = 0;
  for (; e + N <= n; e += N) {
    hn::Store(hn::DemoteTo(d16, hn::BitCast(di, FloatToHalfBitsVec(d, hn::LoadU(d, x + e)))), d16, halves);
    memcpy(dst + 2 * e, halves, N * sizeof(uint16_t));
  }
  if (e < n) {
    hn::Store(hn::DemoteTo(d16, hn::BitCast(di, FloatToHalfBitsVec(d, LoadTail(d, x + e, n - e)))), d16, halves);
    memcpy(dst + 2 * e, halves, (n - e) * sizeof(uint16_t));
  }
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

// Reading a KV cache's stored rows into f32 vectors (the fused decode steps of kv_cache_fused-inl.h): the rows
// of one kv head for a tile's logical positions, and per-vector loads that convert F16 (F16C's vcvtph2ps on x86,
// the exact integer HalfToFloat elsewhere) and Q8 (int8 -> int32 -> f32 times the row's scale: the product Read
// returns) in registers. Also kv_cache-inl.h's HalfToFloat for its tile conversion.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_CACHE_LOAD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_CACHE_LOAD_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_CACHE_LOAD_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_LOAD_INL_H_
#endif

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/common/vector_unit-inl.h"
#include "lib/kv_cache/kv_cache_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// binary16 bits (in 32-bit lanes) -> f32, exact, without float arithmetic on subnormals (ARMv7 NEON flushes
// them): the exponent is re-biased by an integer add; a subnormal half m 2^-24 is built as the normal float
// 2^-14 (1 + m/1024) and 2^-14 subtracted (exact: Sterbenz); infinities and NaNs get the float's all-ones exponent.
template <class D, class VU>
HWY_INLINE hn::Vec<D> HalfToFloat(D d, VU h) {
  const hn::RebindToUnsigned<D> du;
  const auto magnitude = hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x7FFFu)));
  const auto exponent = hn::And(magnitude, hn::Set(du, 0x0F800000u));
  auto bits = hn::Add(magnitude, hn::Set(du, 112u << 23));
  bits = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 0x0F800000u)), hn::Add(bits, hn::Set(du, 112u << 23)), bits);
  const auto subnormal = hn::Sub(hn::BitCast(d, hn::Add(bits, hn::Set(du, 1u << 23))),
                                 hn::BitCast(d, hn::Set(du, 113u << 23)));
  const auto f = hn::IfThenElse(hn::RebindMask(d, hn::Eq(exponent, hn::Zero(du))), subnormal, hn::BitCast(d, bits));
  return hn::Or(f, hn::BitCast(d, hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)))));
}

// How a tile's rows are read: F16 (at an even address), Q8, F32 (at a 4-byte aligned address).
enum KvFusedKind : int { kKvFusedF16 = 0, kKvFusedQ8 = 1, kKvFusedF32 = 2 };

// The stored rows of one kv head's K or V for a tile's logical positions a, a + 1, ...: row j sits in slot
// (a + j) mod capacity (j < capacity: a call's positions are all held).
struct KvFusedRows {
  const unsigned char* base;   // element 0 of this head in slot 0
  size_t row_bytes;            // bytes per slot
  size_t slot0, capacity;
  const unsigned char* scale;  // Q8: this head's K or V scale in slot 0
  size_t scale_bytes;          // bytes per slot of the scales
  const unsigned char* Row(size_t j) const {
    const size_t slot = slot0 + j < capacity ? slot0 + j : slot0 + j - capacity;
    return base + slot * row_bytes;
  }
  // The first of n rows in slot 0 (n if none): the ring wraps at most once in a tile, so P V walks the rows by
  // pointer increments (no division or compare-and-subtract per row and column block).
  size_t Wrap(size_t n) const { return slot0 + n > capacity ? capacity - slot0 : n; }
  const unsigned char* ScalePtr(size_t j) const {
    const size_t slot = slot0 + j < capacity ? slot0 + j : slot0 + j - capacity;
    return scale + slot * scale_bytes;
  }
  float Scale(size_t j) const {
    const size_t slot = slot0 + j < capacity ? slot0 + j : slot0 + j - capacity;
    float s;
    memcpy(&s, scale + slot * scale_bytes, sizeof(s));
    return s;
  }
};

inline KvFusedRows KvFusedRowsOf(const internal::KvAttentionProblem& p, size_t g, size_t which, size_t a) {
  const internal::KvLayout& l = p.layout;
  const size_t width = which == 0 ? l.head_dim : l.value_dim;
  KvFusedRows r;
  r.base = p.storage + (which == 0 ? l.k_offset : l.v_offset) + g * width * l.element_bytes;
  r.row_bytes = (which == 0 ? l.k_row : l.v_row) * l.element_bytes;
  r.slot0 = a % l.capacity;
  r.capacity = l.capacity;
  r.scale = p.storage + l.scale_offset + (g * 2 + which) * sizeof(float);
  r.scale_bytes = l.type == KvType::kQ8 ? l.heads * 2 * sizeof(float) : 0;  // F16: no scales, never read
  return r;
}

template <int kKind>
HWY_INLINE float KvFusedScaleAt(const unsigned char* p) {
  float s = 0.0f;
  if (kKind == kKvFusedQ8) memcpy(&s, p, sizeof(s));
  return s;
}

// Element e of a stored row as a float (the vectors' tails).
template <int kKind>
HWY_INLINE float KvFusedElement(const unsigned char* row, size_t e, float scale) {
  if (kKind == kKvFusedQ8) return static_cast<float>(static_cast<int8_t>(row[e])) * scale;
  if (kKind == kKvFusedF32) {
    float f;
    memcpy(&f, row + 4 * e, sizeof(f));
    return f;
  }
  uint16_t h;
  memcpy(&h, row + 2 * e, sizeof(h));
  return internal::HalfBitsToFloat(h);
}

// Whether a Q8 row with this scale must be converted element by element: a vector unit that flushes subnormal
// operands (kVectorFlushesSubnormals) would turn q * scale into 0 for a subnormal scale (a row whose max |x| is
// below 127 * 2^-126) where Read's scalar product keeps it; other targets multiply as Read does.
HWY_INLINE bool KvQ8ScaleFlushes(float scale) { return kVectorFlushesSubnormals && scale != 0.0f && scale < FLT_MIN; }

// lanes (<= Lanes(d)) elements of a stored row from column c as floats; lanes past them are 0, as LoadTail's.
template <int kKind, class D>
HWY_INLINE hn::Vec<D> KvFusedLoad(D d, const unsigned char* row, size_t c, size_t lanes, hn::Vec<D> vscale,
                                  float scale) {
  if (lanes != hn::Lanes(d) || (kKind == kKvFusedQ8 && KvQ8ScaleFlushes(scale))) {
    HWY_ALIGN float buf[hn::MaxLanes(D())] = {};
    static_assert(sizeof(buf) <= internal::kMaxStackVectorBytes, "tail buffer larger than one bounded vector");
    for (size_t e = 0; e < lanes; ++e) buf[e] = KvFusedElement<kKind>(row, c + e, scale);
    return hn::Load(d, buf);
  }
  if constexpr (kKind == kKvFusedF32) {
    (void)vscale;
    return hn::LoadU(d, static_cast<const float*>(static_cast<const void*>(row)) + c);  // aligned: KvFusedHeads
  } else if constexpr (kKind == kKvFusedQ8) {
    const hn::Rebind<int8_t, D> d8;
    const hn::RebindToSigned<D> di;
    const auto q = hn::LoadU(d8, reinterpret_cast<const int8_t*>(row) + c);
    return hn::Mul(hn::ConvertTo(d, hn::PromoteTo(di, q)), vscale);  // the float product Read returns
  } else {
    const hn::Rebind<uint16_t, D> d16;
    // Even address: checked by KvFusedHeads (a cast through void*: -Wcast-align cannot see the check).
    const auto h = hn::LoadU(d16, static_cast<const uint16_t*>(static_cast<const void*>(row)) + c);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
    // vcvtph2ps: one exact instruction (subnormals, infinities and NaNs included). Highway's emulated PromoteTo on
    // other targets turns infinities and NaNs into finite values: the integer code there.
    const hn::Rebind<hwy::float16_t, D> dh;
    return hn::PromoteTo(d, hn::BitCast(dh, h));
#else
    return HalfToFloat(d, hn::PromoteTo(hn::RebindToUnsigned<D>(), h));
#endif
  }
}

template <class D>
HWY_INLINE hn::Vec<D> KvFusedLoadQ(D d, const float* p, size_t lanes) {
  if (lanes == hn::Lanes(d)) return hn::LoadU(d, p);
  return LoadTail(d, p, lanes);
}

// Dot(d, q_row, row, n) (lib/dot) on the row's stored values: the same accumulators and order.
template <int kKind, class D>
HWY_INLINE float KvFusedDot(D d, const float* q_row, const unsigned char* row, size_t n, float scale) {
  const size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, scale);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::MulAdd(hn::LoadU(d, q_row + i), KvFusedLoad<kKind>(d, row, i, N, vs, scale), s0);
    s1 = hn::MulAdd(hn::LoadU(d, q_row + i + N), KvFusedLoad<kKind>(d, row, i + N, N, vs, scale), s1);
    s2 = hn::MulAdd(hn::LoadU(d, q_row + i + 2 * N), KvFusedLoad<kKind>(d, row, i + 2 * N, N, vs, scale), s2);
    s3 = hn::MulAdd(hn::LoadU(d, q_row + i + 3 * N), KvFusedLoad<kKind>(d, row, i + 3 * N, N, vs, scale), s3);
  }
  for (; i + N <= n; i += N) s0 = hn::MulAdd(hn::LoadU(d, q_row + i), KvFusedLoad<kKind>(d, row, i, N, vs, scale), s0);
  if (i < n) s1 = hn::MulAdd(LoadTail(d, q_row + i, n - i), KvFusedLoad<kKind>(d, row, i, n - i, vs, scale), s1);
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// SPDX-License-Identifier: Apache-2.0
// The storage formats on Highway vectors, and what is written once over them (gemma.cpp's compression traits have
// the same shape: one kernel, many storage types). A format is a struct with
//   kBytes, kScaled, kAlignment            element size, whether each row carries a float scale (Q8), and the row
//                                          address alignment Load needs;
//   Element(row, e, scale)                 element e of a stored row as a float (the scalar read, lib/common/*.h);
//   VectorLoads(scale)                     whether Load gives Element's values for a row of this scale;
//   Load(d, row, c, vscale)                Lanes(d) elements from column c as floats, lane by lane Element's value;
//   LoadPartial(d, row, c, lanes, scale)   lanes (<= Lanes(d)) of them, the other lanes 0 (a row's tail, or a row
//                                          VectorLoads declines).
// F32Format (f32-inl.h), F16Format (f16-inl.h) and Q8Format (q8-inl.h). Every kernel over a format reads through
// LoadRowVec below, so each format gives the bits of F32 holding the values Element returns.

#if defined(EDGEATTN_LIB_COMMON_FORMATS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_FORMATS_INL_H_
#undef EDGEATTN_LIB_COMMON_FORMATS_INL_H_
#else
#define EDGEATTN_LIB_COMMON_FORMATS_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "lib/common/f16-inl.h"
#include "lib/common/f32-inl.h"
#include "lib/common/q8-inl.h"
#include "lib/common/simd_tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A scaled format's row scale stored at p (any alignment); 0 for the others (never read).
template <class Format>
HWY_INLINE float RowScaleAt(const unsigned char* p) {
  float s = 0.0f;
  if (Format::kScaled) memcpy(&s, p, sizeof(s));
  return s;
}

// lanes (<= Lanes(d)) elements of a stored row from column c as floats; lanes past them are 0, as LoadTail's.
template <class Format, class D>
HWY_INLINE hn::Vec<D> LoadRowVec(D d, const unsigned char* row, size_t c, size_t lanes, hn::Vec<D> vscale,
                                 float scale) {
  if (lanes == hn::Lanes(d) && Format::VectorLoads(scale)) return Format::Load(d, row, c, vscale);
  return Format::LoadPartial(d, row, c, lanes, scale);
}

// lanes (<= Lanes(d)) floats at p; lanes past them are 0.
template <class D>
HWY_INLINE hn::Vec<D> LoadVecN(D d, const float* p, size_t lanes) {
  return lanes == hn::Lanes(d) ? hn::LoadU(d, p) : LoadTail(d, p, lanes);
}

// Dot(d, x, row, n) (lib/dot/dot-inl.h) on a stored row's values: the same accumulators and order, so an F32 row
// gives Dot's bits and the others those of F32 holding their values.
template <class Format, class D>
HWY_INLINE float RowDot(D d, const float* x, const unsigned char* row, size_t n, float scale) {
  const size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, scale);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::MulAdd(hn::LoadU(d, x + i), LoadRowVec<Format>(d, row, i, N, vs, scale), s0);
    s1 = hn::MulAdd(hn::LoadU(d, x + i + N), LoadRowVec<Format>(d, row, i + N, N, vs, scale), s1);
    s2 = hn::MulAdd(hn::LoadU(d, x + i + 2 * N), LoadRowVec<Format>(d, row, i + 2 * N, N, vs, scale), s2);
    s3 = hn::MulAdd(hn::LoadU(d, x + i + 3 * N), LoadRowVec<Format>(d, row, i + 3 * N, N, vs, scale), s3);
  }
  for (; i + N <= n; i += N) s0 = hn::MulAdd(hn::LoadU(d, x + i), LoadRowVec<Format>(d, row, i, N, vs, scale), s0);
  if (i < n) s1 = hn::MulAdd(LoadTail(d, x + i, n - i), LoadRowVec<Format>(d, row, i, n - i, vs, scale), s1);
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
}

// Columns [c, n) of a row, from column c on, by vectors of d and then of its halves while at least half a vector is
// left on x86 (down to 4 lanes; a row of 8 on AVX-512 is one half vector, not 8 elements); returns the first column not
// done. Load gives Element's values wherever it is called (VectorLoads checked by the caller).
template <class Format, class D>
HWY_INLINE size_t ConvertColumns(D d, const unsigned char* row, size_t c, size_t n, float scale, float* dst) {
  const size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, scale);
  for (; c + N <= n; c += N) hn::StoreU(Format::Load(d, row, c, vs), d, dst + c);
#if HWY_ARCH_X86  // fixed-size vectors; SVE's scalable halves are not measured
  if constexpr (hn::MaxLanes(D()) > 4) {
    if (c + N / 2 <= n) return ConvertColumns<Format>(hn::Half<D>(), row, c, n, scale, dst);
  }
#endif
  return c;
}

// A stored row of n elements as floats into dst: Element's values, by vectors where the row's address allows
// Load (a misaligned row, a vector unit that would flush a Q8 row's scale: element by element).
template <class Format, class D>
HWY_INLINE void ConvertRow(D d, const unsigned char* row, size_t n, float scale, float* dst) {
  if constexpr (Format::kBytes == sizeof(float) && !Format::kScaled) {  // F32: a copy, at any address
    (void)d, (void)scale;
    memcpy(dst, row, n * sizeof(float));
    return;
  }
  size_t c = 0;
  if (reinterpret_cast<uintptr_t>(row) % Format::kAlignment == 0 && Format::VectorLoads(scale)) {
    c = ConvertColumns<Format>(d, row, 0, n, scale, dst);
  }
  for (; c < n; ++c) dst[c] = Format::Element(row, c, scale);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

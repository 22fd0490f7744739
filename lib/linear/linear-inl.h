// Linear projection on Highway vectors: output columns in registers, one broadcast x[i] per step.

#if defined(EDGEATTN_LIB_LINEAR_LINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_LINEAR_LINEAR_INL_H_
#undef EDGEATTN_LIB_LINEAR_LINEAR_INL_H_
#else
#define EDGEATTN_LIB_LINEAR_LINEAR_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/common/simd_tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y = x W + bias for rows of x; the same summation order as LinearScalar (bias first, then increasing i), so
// both paths share one error bound. Four output vectors per pass keep four independent FMA chains in flight.
inline void LinearRows(const float* HWY_RESTRICT x, size_t rows, size_t in, const float* HWY_RESTRICT w,
                       const float* HWY_RESTRICT bias, size_t out, float* HWY_RESTRICT y) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t r = 0; r < rows; ++r) {
    const float* x_row = x + r * in;
    float* y_row = y + r * out;
    size_t o = 0;
    for (; o + 4 * N <= out; o += 4 * N) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
      if (bias != nullptr) {
        a0 = hn::LoadU(d, bias + o);
        a1 = hn::LoadU(d, bias + o + N);
        a2 = hn::LoadU(d, bias + o + 2 * N);
        a3 = hn::LoadU(d, bias + o + 3 * N);
      }
      for (size_t i = 0; i < in; ++i) {
        const auto xi = hn::Set(d, x_row[i]);
        const float* w_row = w + i * out + o;
        a0 = hn::MulAdd(xi, hn::LoadU(d, w_row), a0);
        a1 = hn::MulAdd(xi, hn::LoadU(d, w_row + N), a1);
        a2 = hn::MulAdd(xi, hn::LoadU(d, w_row + 2 * N), a2);
        a3 = hn::MulAdd(xi, hn::LoadU(d, w_row + 3 * N), a3);
      }
      hn::StoreU(a0, d, y_row + o);
      hn::StoreU(a1, d, y_row + o + N);
      hn::StoreU(a2, d, y_row + o + 2 * N);
      hn::StoreU(a3, d, y_row + o + 3 * N);
    }
    for (; o + N <= out; o += N) {
      auto a = bias != nullptr ? hn::LoadU(d, bias + o) : hn::Zero(d);
      for (size_t i = 0; i < in; ++i) a = hn::MulAdd(hn::Set(d, x_row[i]), hn::LoadU(d, w + i * out + o), a);
      hn::StoreU(a, d, y_row + o);
    }
    if (o < out) {
      const size_t rest = out - o;
      auto a = bias != nullptr ? LoadTail(d, bias + o, rest) : hn::Zero(d);
      for (size_t i = 0; i < in; ++i) a = hn::MulAdd(hn::Set(d, x_row[i]), LoadTail(d, w + i * out + o, rest), a);
      StoreTail(d, a, y_row + o, rest);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

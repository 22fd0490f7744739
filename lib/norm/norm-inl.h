// RMSNorm and LayerNorm passes on Highway vectors; the per-row steps are the shared driver in norm_scalar.h.

#if defined(EDGEATTN_LIB_NORM_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_NORM_NORM_INL_H_
#undef EDGEATTN_LIB_NORM_NORM_INL_H_
#else
#define EDGEATTN_LIB_NORM_NORM_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/common/stack_vector.h"
#include "lib/norm/norm_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct NormSimdPasses {
  // Two sum-of-squares accumulators, so that two FMA chains overlap; the max needs no second chain (max has a
  // latency of one or two cycles). Zero-padded tails add 0 and do not change the max of absolute values.
  static internal::SquareSums SumSquares(const float* HWY_RESTRICT x, size_t n, float hi, float lo, float scale,
                                         bool centered) {
    const hn::ScalableTag<float> d;
    const size_t N = hn::Lanes(d);
    const auto vhi = hn::Set(d, hi), vlo = hn::Set(d, lo), vscale = hn::Set(d, scale);
    auto s0 = hn::Zero(d), s1 = hn::Zero(d), m = hn::Zero(d);
    // A NaN lane is kept apart: Highway's Max does not promise to propagate NaN on every target.
    auto nan_seen = hn::Zero(d);
    const auto step = [&](hn::VFromD<decltype(d)> v, hn::VFromD<decltype(d)>& acc) HWY_ATTR {
      if (centered) v = hn::Sub(hn::Sub(v, vhi), vlo);
      const auto a = hn::Abs(v);
      m = hn::Max(m, a);
      nan_seen = hn::Add(nan_seen, hn::Sub(a, a));  // 0, or NaN for an inf or NaN lane
      const auto t = hn::Mul(v, vscale);
      acc = hn::MulAdd(t, t, acc);
    };
    size_t j = 0;
    for (; j + 2 * N <= n; j += 2 * N) {
      step(hn::LoadU(d, x + j), s0);
      step(hn::LoadU(d, x + j + N), s1);
    }
    for (; j + N <= n; j += N) step(hn::LoadU(d, x + j), s0);
    if (j < n) {
      // The zero padding becomes -hi - lo when centred: mask it back to zero.
      const auto mask = hn::FirstN(d, n - j);
      auto v = LoadTail(d, x + j, n - j);
      if (centered) v = hn::IfThenElseZero(mask, hn::Sub(hn::Sub(v, vhi), vlo));
      const auto a = hn::Abs(v);
      m = hn::Max(m, a);
      nan_seen = hn::Add(nan_seen, hn::Sub(a, a));
      const auto t = hn::Mul(v, vscale);
      s1 = hn::MulAdd(t, t, s1);
    }
    internal::SquareSums sums;
    sums.sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
    sums.max_abs = hn::GetLane(hn::MaxOfLanes(d, m));
    const float nan_lanes = hn::GetLane(hn::SumOfLanes(d, nan_seen));
    if (nan_lanes != 0.0f) sums.max_abs = internal::kInfinity;  // NaN (from inf - inf or NaN): not finite
    return sums;
  }

  // Per-lane sums with Knuth's 2Sum error terms (six operations per element, no FMA, so the same on every
  // target); the lanes' sums and errors are added in double precision.
  static double CompensatedSum(const float* HWY_RESTRICT x, size_t n, float scale) {
    // Capped at one bounded vector (the same tag as ScalableTag on every target but RVV): the lane buffers below.
    const hn::CappedTag<float, internal::kMaxStackVectorBytes / sizeof(float)> d;
    const size_t N = hn::Lanes(d);
    const auto vscale = hn::Set(d, scale);
    auto sum = hn::Zero(d), compensation = hn::Zero(d);
    const auto add = [&](hn::VFromD<decltype(d)> v) HWY_ATTR {
      v = hn::Mul(v, vscale);
      const auto next = hn::Add(sum, v);
      const auto bb = hn::Sub(next, sum);
      const auto error = hn::Add(hn::Sub(sum, hn::Sub(next, bb)), hn::Sub(v, bb));
      compensation = hn::Add(compensation, error);
      sum = next;
    };
    size_t j = 0;
    for (; j + N <= n; j += N) add(hn::LoadU(d, x + j));
    if (j < n) add(LoadTail(d, x + j, n - j));
    HWY_ALIGN float sums[hn::MaxLanes(decltype(d)())];
    HWY_ALIGN float errors[hn::MaxLanes(decltype(d)())];
    static_assert(sizeof(sums) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
    hn::Store(sum, d, sums);
    hn::Store(compensation, d, errors);
    double total = 0.0;
    for (size_t l = 0; l < N; ++l) total += static_cast<double>(sums[l]) + static_cast<double>(errors[l]);
    return total;
  }

  static void Apply(const float* x, size_t n, float hi, float lo, float scale, float gain, const float* weight,
                    const float* bias, bool centered, float* y) {
    const hn::ScalableTag<float> d;
    const size_t N = hn::Lanes(d);
    const auto vhi = hn::Set(d, hi), vlo = hn::Set(d, lo), vscale = hn::Set(d, scale), vgain = hn::Set(d, gain);
    const auto one = [&](hn::VFromD<decltype(d)> v, size_t j, size_t count) HWY_ATTR {
      if (centered) v = hn::Sub(hn::Sub(v, vhi), vlo);
      v = hn::Mul(hn::Mul(v, vscale), vgain);
      if (weight != nullptr) v = hn::Mul(v, count == N ? hn::LoadU(d, weight + j) : LoadTail(d, weight + j, count));
      if (bias != nullptr) v = hn::Add(v, count == N ? hn::LoadU(d, bias + j) : LoadTail(d, bias + j, count));
      return v;
    };
    size_t j = 0;
    for (; j + N <= n; j += N) hn::StoreU(one(hn::LoadU(d, x + j), j, N), d, y + j);
    if (j < n) StoreTail(d, one(LoadTail(d, x + j, n - j), j, n - j), y + j, n - j);
  }
};

inline void RmsNormRowsSimd(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y) {
  internal::RmsNormRows<NormSimdPasses>(x, rows, cols, weight, eps, y);
}

inline void LayerNormRowsSimd(const float* x, size_t rows, size_t cols, const float* weight, const float* bias,
                              float eps, float* y) {
  internal::LayerNormRows<NormSimdPasses>(x, rows, cols, weight, bias, eps, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

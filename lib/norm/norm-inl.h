// SPDX-License-Identifier: Apache-2.0
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
  // The common pass: the sum of squares alone. Eight FMA chains: a row of 384 floats is 24 AVX-512 vectors, which
  // the two loads per cycle deliver in 12 cycles; with four chains the row would be six FMA latencies (4 cycles
  // each) deep, with eight three, and a short row's time is this pass's latency plus the per-row factor's.
  static float SquareSum(const float* HWY_RESTRICT x, size_t n, float hi, float lo, bool centered) {
    const hn::ScalableTag<float> d;
    const size_t N = hn::Lanes(d);
    const auto vhi = hn::Set(d, hi), vlo = hn::Set(d, lo);
    const auto centre = [&](hn::VFromD<decltype(d)> v)
                            HWY_ATTR { return centered ? hn::Sub(hn::Sub(v, vhi), vlo) : v; };
    auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
    auto s4 = hn::Zero(d), s5 = hn::Zero(d), s6 = hn::Zero(d), s7 = hn::Zero(d);
    size_t j = 0;
    for (; j + 8 * N <= n; j += 8 * N) {
      const auto v0 = centre(hn::LoadU(d, x + j)), v1 = centre(hn::LoadU(d, x + j + N));
      const auto v2 = centre(hn::LoadU(d, x + j + 2 * N)), v3 = centre(hn::LoadU(d, x + j + 3 * N));
      const auto v4 = centre(hn::LoadU(d, x + j + 4 * N)), v5 = centre(hn::LoadU(d, x + j + 5 * N));
      const auto v6 = centre(hn::LoadU(d, x + j + 6 * N)), v7 = centre(hn::LoadU(d, x + j + 7 * N));
      s0 = hn::MulAdd(v0, v0, s0);
      s1 = hn::MulAdd(v1, v1, s1);
      s2 = hn::MulAdd(v2, v2, s2);
      s3 = hn::MulAdd(v3, v3, s3);
      s4 = hn::MulAdd(v4, v4, s4);
      s5 = hn::MulAdd(v5, v5, s5);
      s6 = hn::MulAdd(v6, v6, s6);
      s7 = hn::MulAdd(v7, v7, s7);
    }
    for (; j + 2 * N <= n; j += 2 * N) {
      const auto v0 = centre(hn::LoadU(d, x + j)), v1 = centre(hn::LoadU(d, x + j + N));
      s0 = hn::MulAdd(v0, v0, s0);
      s1 = hn::MulAdd(v1, v1, s1);
    }
    for (; j + N <= n; j += N) {
      const auto v = centre(hn::LoadU(d, x + j));
      s2 = hn::MulAdd(v, v, s2);
    }
    if (j < n) {  // the zero padding becomes -hi - lo when centred: masked back to zero
      const auto v = hn::IfThenElseZero(hn::FirstN(d, n - j), centre(LoadTail(d, x + j, n - j)));
      s3 = hn::MulAdd(v, v, s3);
    }
    const auto low = hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)), high = hn::Add(hn::Add(s4, s5), hn::Add(s6, s7));
    return hn::GetLane(hn::SumOfLanes(d, hn::Add(low, high)));
  }

  // The careful pass (rows the common pass cannot vouch for): the max |.| and a NaN check beside the sum of
  // (x * scale)^2. Two sum-of-squares accumulators; the max needs no second chain (max has a latency of one or
  // two cycles). Zero-padded tails add 0 and do not change the max of absolute values.
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

#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  // The row sum times scale in double lanes: each float is exact in double and each addition rounds at 2^-53
  // relative, so the mean is far inside the 2^-46 that LayerNorm's bound allows (norm.h), and the sum cannot
  // overflow. Four accumulator chains (two vectors of floats, each widened to two of doubles) against the
  // latency of the additions; scale (a power of two) is applied once, to the total, exactly.
  static double RowSum(const float* HWY_RESTRICT x, size_t n, float scale) {
    const hn::ScalableTag<float> d;
    const hn::Repartition<double, decltype(d)> dd;
    const hn::Half<decltype(d)> dh;
    const size_t N = hn::Lanes(d);
    auto a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
    size_t j = 0;
    const size_t H = N / 2;  // half vectors loaded as such: the conversion takes its operand from memory
    for (; j + 2 * N <= n; j += 2 * N) {
      a0 = hn::Add(a0, hn::PromoteTo(dd, hn::LoadU(dh, x + j)));
      a1 = hn::Add(a1, hn::PromoteTo(dd, hn::LoadU(dh, x + j + H)));
      a2 = hn::Add(a2, hn::PromoteTo(dd, hn::LoadU(dh, x + j + 2 * H)));
      a3 = hn::Add(a3, hn::PromoteTo(dd, hn::LoadU(dh, x + j + 3 * H)));
    }
    for (; j < n; j += N) {  // zero-padded: the padding adds 0
      const auto v = j + N <= n ? hn::LoadU(d, x + j) : LoadTail(d, x + j, n - j);
      a0 = hn::Add(a0, hn::PromoteTo(dd, hn::LowerHalf(dh, v)));
      a1 = hn::Add(a1, hn::PromoteTo(dd, hn::UpperHalf(dh, v)));
    }
    const double total = hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
    return total * static_cast<double>(scale);
  }

  // 1 / sqrt(sum * inv_n + offset) with the FPU's double operations: the argument in one fused multiply-add, then
  // its square root and its reciprocal side by side and their product (four roundings at 2^-53, far below the float
  // result's 2^-24). A division after the square root would put both latencies on the row's path (about 30
  // cycles); side by side they cost the longer one plus a multiply. The argument lies in [2^-401, 2^383] (norm.h's
  // rescaling), so 1 / t neither overflows nor loses bits.
  static double InverseRoot(double sum, double inv_n, double offset) {
    const hn::CappedTag<double, 1> d1;
    const auto t = hn::MulAdd(hn::Set(d1, sum), hn::Set(d1, inv_n), hn::Set(d1, offset));
    return hn::GetLane(hn::Mul(hn::Sqrt(t), hn::Div(hn::Set(d1, 1.0), t)));
  }
#else
  // Per-lane sums with Knuth's 2Sum error terms (six operations per element, no FMA, so the same on every
  // target); the lanes' sums and errors are added in double precision. For targets without double vectors.
  static double RowSum(const float* HWY_RESTRICT x, size_t n, float scale) {
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

  static double InverseRoot(double sum, double inv_n, double offset) {
    return internal::InverseRootDouble(sum, inv_n, offset);
  }
#endif

  // scale is 1 on every row but the rescaled ones: its multiply (exact by 1) is then left out of the loop.
  static void Apply(const float* x, size_t n, float hi, float lo, float scale, float gain, const float* weight,
                    const float* bias, bool centered, float* y) {
    if (scale == 1.0f) return ApplyScaled<false>(x, n, hi, lo, scale, gain, weight, bias, centered, y);
    ApplyScaled<true>(x, n, hi, lo, scale, gain, weight, bias, centered, y);
  }

  template <bool kScaled>
  static void ApplyScaled(const float* x, size_t n, float hi, float lo, float scale, float gain, const float* weight,
                          const float* bias, bool centered, float* y) {
    const hn::ScalableTag<float> d;
    const size_t N = hn::Lanes(d);
    const auto vhi = hn::Set(d, hi), vlo = hn::Set(d, lo), vscale = hn::Set(d, scale), vgain = hn::Set(d, gain);
    const auto one = [&](hn::VFromD<decltype(d)> v, size_t j, size_t count) HWY_ATTR {
      if (centered) v = hn::Sub(hn::Sub(v, vhi), vlo);
      if (kScaled) v = hn::Mul(v, vscale);
      v = hn::Mul(v, vgain);
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

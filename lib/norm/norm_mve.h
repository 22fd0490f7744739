// SPDX-License-Identifier: Apache-2.0
// RMSNorm and LayerNorm passes on Helium (MVE), for the row driver the other paths share (norm_scalar.h: which
// passes run, the rescaling, the per-row factor in double precision). Contract: norm.h with the flush-to-zero
// underflow terms (2^-126 instead of 2^-149; inputs below FLT_MIN count as zero, so a row of subnormals with
// eps = 0 gives zeros), since MVE flushes (lib/common/mve.h). The rescaled sum of squares keeps squares of rows
// with max |x| >= FLT_MIN out of the subnormal range, as on the other paths.
#ifndef EDGEATTN_LIB_NORM_NORM_MVE_H_
#define EDGEATTN_LIB_NORM_NORM_MVE_H_

#include "lib/common/float_util.h"
#include "lib/common/mve.h"
#include "lib/norm/norm_scalar.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

struct NormMvePasses {
  // The common pass: the sum of squares of ((x - hi) - lo) (centered) or x in two chains; zero-padded tail lanes
  // add 0 (masked to 0 when centred).
  static float SquareSum(const float* x, size_t n, float hi, float lo, bool centered) {
    const float32x4_t vhi = vdupq_n_f32(hi), vlo = vdupq_n_f32(lo), zero = vdupq_n_f32(0.0f);
    float32x4_t s0 = zero, s1 = zero;
    size_t j = 0;
    for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
      float32x4_t a = vldrwq_f32(x + j), b = vldrwq_f32(x + j + kLanes);
      if (centered) a = vsubq_f32(vsubq_f32(a, vhi), vlo), b = vsubq_f32(vsubq_f32(b, vhi), vlo);
      s0 = vfmaq_f32(s0, a, a);
      s1 = vfmaq_f32(s1, b, b);
    }
    for (; j + kLanes <= n; j += kLanes) {
      float32x4_t a = vldrwq_f32(x + j);
      if (centered) a = vsubq_f32(vsubq_f32(a, vhi), vlo);
      s0 = vfmaq_f32(s0, a, a);
    }
    if (j < n) {
      float32x4_t v = LoadTail(x + j, n - j);
      if (centered) v = vpselq_f32(vsubq_f32(vsubq_f32(v, vhi), vlo), zero, FirstLanes(n - j));
      s1 = vfmaq_f32(s1, v, v);
    }
    return SumLanes(vaddq_f32(s0, s1));
  }

  // Two sum-of-squares chains and the max of |v| in a third register. VMAXNM ignores NaN, but a NaN makes the sum
  // NaN (and an inf makes the max inf), which is all the row driver tests. Zero-padded tail lanes add 0 and are
  // masked to 0 when centred.
  static internal::SquareSums SumSquares(const float* x, size_t n, float hi, float lo, float scale, bool centered) {
    const float32x4_t vhi = vdupq_n_f32(hi), vlo = vdupq_n_f32(lo), vscale = vdupq_n_f32(scale);
    const float32x4_t zero = vdupq_n_f32(0.0f);
    float32x4_t s0 = zero, s1 = zero, m = zero;
    const auto step = [&](float32x4_t v, float32x4_t& acc) {
      if (centered) v = vsubq_f32(vsubq_f32(v, vhi), vlo);
      m = vmaxnmq_f32(m, vabsq_f32(v));
      const float32x4_t t = vmulq_f32(v, vscale);
      acc = vfmaq_f32(acc, t, t);
    };
    size_t j = 0;
    for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
      step(vldrwq_f32(x + j), s0);
      step(vldrwq_f32(x + j + kLanes), s1);
    }
    for (; j + kLanes <= n; j += kLanes) step(vldrwq_f32(x + j), s0);
    if (j < n) {
      float32x4_t v = LoadTail(x + j, n - j);
      if (centered) v = vpselq_f32(vsubq_f32(vsubq_f32(v, vhi), vlo), zero, FirstLanes(n - j));
      m = vmaxnmq_f32(m, vabsq_f32(v));
      const float32x4_t t = vmulq_f32(v, vscale);
      s1 = vfmaq_f32(s1, t, t);
    }
    internal::SquareSums sums;
    sums.sum = SumLanes(vaddq_f32(s0, s1));
    sums.max_abs = vmaxnmvq_f32(0.0f, m);
    return sums;
  }

  // Per-lane sums with Knuth's 2Sum error terms; the lanes' sums and errors added in double precision.
  static double RowSum(const float* x, size_t n, float scale) {
    const float32x4_t vscale = vdupq_n_f32(scale);
    float32x4_t sum = vdupq_n_f32(0.0f), compensation = sum;
    const auto add = [&](float32x4_t v) {
      v = vmulq_f32(v, vscale);
      const float32x4_t next = vaddq_f32(sum, v);
      const float32x4_t bb = vsubq_f32(next, sum);
      compensation = vaddq_f32(compensation, vaddq_f32(vsubq_f32(sum, vsubq_f32(next, bb)), vsubq_f32(v, bb)));
      sum = next;
    };
    size_t j = 0;
    for (; j + kLanes <= n; j += kLanes) add(vldrwq_f32(x + j));
    if (j < n) add(LoadTail(x + j, n - j));
    double total = 0.0;
    total += static_cast<double>(vgetq_lane_f32(sum, 0)) + static_cast<double>(vgetq_lane_f32(compensation, 0));
    total += static_cast<double>(vgetq_lane_f32(sum, 1)) + static_cast<double>(vgetq_lane_f32(compensation, 1));
    total += static_cast<double>(vgetq_lane_f32(sum, 2)) + static_cast<double>(vgetq_lane_f32(compensation, 2));
    total += static_cast<double>(vgetq_lane_f32(sum, 3)) + static_cast<double>(vgetq_lane_f32(compensation, 3));
    return total;
  }

  static double InverseRoot(double sum, double inv_n, double offset) {
    return internal::InverseRootDouble(sum, inv_n, offset);
  }

  // y = ((((x - hi) - lo) * scale) * gain) * weight + bias, products and sums rounded one by one (as every path).
  static void Apply(const float* x, size_t n, float hi, float lo, float scale, float gain, const float* weight,
                    const float* bias, bool centered, float* y) {
    const float32x4_t vhi = vdupq_n_f32(hi), vlo = vdupq_n_f32(lo);
    const float32x4_t vscale = vdupq_n_f32(scale), vgain = vdupq_n_f32(gain);
    const auto one = [&](float32x4_t v, size_t j, size_t count) {
      if (centered) v = vsubq_f32(vsubq_f32(v, vhi), vlo);
      v = vmulq_f32(vmulq_f32(v, vscale), vgain);
      if (weight != nullptr) v = vmulq_f32(v, count == kLanes ? vldrwq_f32(weight + j) : LoadTail(weight + j, count));
      if (bias != nullptr) v = vaddq_f32(v, count == kLanes ? vldrwq_f32(bias + j) : LoadTail(bias + j, count));
      return v;
    };
    size_t j = 0;
    for (; j + kLanes <= n; j += kLanes) vstrwq_f32(y + j, one(vldrwq_f32(x + j), j, kLanes));
    if (j < n) StoreTail(y + j, one(LoadTail(x + j, n - j), j, n - j), n - j);
  }
};

inline void RmsNormRowsMve(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y) {
  internal::RmsNormRows<NormMvePasses>(x, rows, cols, weight, eps, y);
}

inline void LayerNormRowsMve(const float* x, size_t rows, size_t cols, const float* weight, const float* bias,
                             float eps, float* y) {
  internal::LayerNormRows<NormMvePasses>(x, rows, cols, weight, bias, eps, y);
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_NORM_NORM_MVE_H_

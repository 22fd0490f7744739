// SPDX-License-Identifier: Apache-2.0
// RMSNorm and LayerNorm: the per-row steps both paths share (which passes to run, the per-row factor in double
// precision) and the scalar passes. The SIMD passes (norm-inl.h) have the same signatures, so one row driver
// serves both paths and the two cannot drift apart.
#ifndef EDGEATTN_LIB_NORM_NORM_SCALAR_H_
#define EDGEATTN_LIB_NORM_NORM_SCALAR_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/bit_cast.h"
#include "lib/common/float_util.h"

namespace edgeattn {
namespace internal {

// 1/sqrt(t) for a finite t > 0, to double precision without libm (firmware links none): t = f * 4^e with f in
// [1, 4), a float square root as the seed (24 bits), two Newton steps (48, then the 53 of double).
inline double ReciprocalSqrtDouble(double t) {
  const uint64_t bits = BitCastScalar<uint64_t>(t);
  int64_t e2 = static_cast<int64_t>((bits >> 52) & 0x7ff) - 1023;
  double f = t;
  if (e2 == -1023) {  // subnormal double: cannot come from float inputs, but keep the function total
    f = t * 0x1p64;
    e2 = static_cast<int64_t>((BitCastScalar<uint64_t>(f) >> 52) & 0x7ff) - 1023 - 64;
  }
  const int64_t e = e2 >= 0 ? e2 / 2 : -((1 - e2) / 2);  // floor(e2 / 2)
  // f = t * 4^-e in [1, 4): replace the exponent field.
  f = BitCastScalar<double>((BitCastScalar<uint64_t>(f) & ~(uint64_t{0x7ff} << 52)) |
                            (static_cast<uint64_t>(e2 - 2 * e + 1023) << 52));
  double r = static_cast<double>(1.0f / __builtin_sqrtf(static_cast<float>(f)));
  r = r * (1.5 - 0.5 * f * r * r);
  r = r * (1.5 - 0.5 * f * r * r);
  return r * BitCastScalar<double>(static_cast<uint64_t>(1023 - e) << 52);  // times 2^-e
}

// 1 / sqrt(sum * inv_n + offset), each step a plain double operation: the per-row factor of the passes without a
// double FPU vector (the SIMD passes fuse the argument and run the square root beside a division, norm-inl.h).
inline double InverseRootDouble(double sum, double inv_n, double offset) {
  return ReciprocalSqrtDouble(sum * inv_n + offset);
}

// 2^k, k clamped to [-126, 127], that brings max_abs (> 0, finite) into [1, 2) (or [2, 4) when max_abs >= 2^126,
// and below 1 when max_abs is subnormal). Scaling a float by it is exact unless the product falls below FLT_MIN.
inline float PowerOfTwoScale(float max_abs) {
  const int32_t biased = static_cast<int32_t>((BitCastScalar<uint32_t>(max_abs) >> 23) & 0xff);
  int32_t k = 127 - biased;
  if (k < -126) k = -126;
  if (k > 127) k = 127;
  return BitCastScalar<float>(static_cast<uint32_t>(k + 127) << 23);
}

// Below this max |x| the squares of the largest elements come within 2^-66 of FLT_MIN, where subnormal
// rounding (or flushing) could matter: the sum of squares is redone scaled.
constexpr float kNormRescaleBelow = 0x1p-30f;

// A plain float sum of squares s of n finite values that is at least n * 2^-58 proves max |x|^2 >= s / (n (1 +
// gamma_n)) > 2^-60, i.e. max |x| >= kNormRescaleBelow: such a row needs neither the max nor a rescaled pass.
constexpr float kNormPlainSumMin = 0x1p-58f;

// Sum of squares of ((x - hi) - lo) * scale (kCentered) or x * scale, and max |.| of the unscaled values.
struct SquareSums {
  float sum;
  float max_abs;
};

struct NormScalarPasses {
  // The common pass: the sum of squares of ((x - hi) - lo) (centered) or x, nothing else.
  static float SquareSum(const float* x, size_t n, float hi, float lo, bool centered) {
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t j = 0; j < n; ++j) {
      const float v = centered ? (x[j] - hi) - lo : x[j];
      s[j % 4] += v * v;
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
  }

  // The careful pass, for rows the common one cannot vouch for: the max |.| too, and x * scale squared.
  static SquareSums SumSquares(const float* x, size_t n, float hi, float lo, float scale, bool centered) {
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float m = 0.0f;
    for (size_t j = 0; j < n; ++j) {
      const float v = centered ? (x[j] - hi) - lo : x[j];
      const float a = v < 0.0f ? -v : v;
      m = a > m || a != a ? a : m;  // a NaN sticks, as the sum's NaN would
      const float t = v * scale;
      s[j % 4] += t * t;
    }
    return SquareSums{(s[0] + s[1]) + (s[2] + s[3]), m};
  }

  // sum of x * scale as the unevaluated double sum*+compensation: 2Sum per element.
  static double RowSum(const float* x, size_t n, float scale) {
    float sum = 0.0f, compensation = 0.0f;
    for (size_t j = 0; j < n; ++j) AddCompensated(x[j] * scale, sum, compensation);
    return static_cast<double>(sum) + static_cast<double>(compensation);
  }

  static double InverseRoot(double sum, double inv_n, double offset) { return InverseRootDouble(sum, inv_n, offset); }

  // y = ((((x - hi) - lo) * scale) * gain) * weight + bias (the subtractions only if centered; scale 1 is exact).
  static void Apply(const float* x, size_t n, float hi, float lo, float scale, float gain, const float* weight,
                    const float* bias, bool centered, float* y) {
    for (size_t j = 0; j < n; ++j) {
      float v = centered ? (x[j] - hi) - lo : x[j];
      v = (v * scale) * gain;
      if (weight != nullptr) v *= weight[j];
      if (bias != nullptr) v += bias[j];
      y[j] = v;
    }
  }
};

// Sum of squares of the (centred) row, rescaled by a power of two when the plain sum overflowed or the row is so
// small that its squares approach the subnormal range. Returns false for a row holding inf or NaN. The common row
// takes one plain pass; the careful passes (the max, a NaN check, a rescaled sum) run only when that pass's sum is
// not finite or too small to prove the row needs no rescaling (kNormPlainSumMin), and then decide as before.
template <class Passes>
bool ScaledSquareSum(const float* x, size_t n, float hi, float lo, bool centered, float* sum, float* scale) {
  const float plain = Passes::SquareSum(x, n, hi, lo, centered);
  *scale = 1.0f;
  if (plain < kInfinity && plain >= static_cast<float>(n) * kNormPlainSumMin) {
    *sum = plain;
    return true;
  }
  SquareSums sums = Passes::SumSquares(x, n, hi, lo, 1.0f, centered);
  if (sums.sum != sums.sum || !(sums.max_abs < kInfinity)) return false;
  if (sums.max_abs != 0.0f && (sums.max_abs < kNormRescaleBelow || !(sums.sum < kInfinity))) {
    *scale = PowerOfTwoScale(sums.max_abs);
    sums.sum = Passes::SumSquares(x, n, hi, lo, *scale, centered).sum;
  }
  *sum = sums.sum;
  return true;
}

// gain = 1 / sqrt(sum / n + eps * scale^2), in double: eps * scale^2 reaches 2^254 and sum / n can be 2^-44 / n.
// inv_n = 1 / n in double, formed once per call: a multiply instead of a division on each row's critical path
// (its two roundings at 2^-53 are far below the float result's).
template <class Passes>
float NormGain(float sum, double inv_n, float eps, float scale) {
  const double s = static_cast<double>(scale);
  return static_cast<float>(Passes::InverseRoot(static_cast<double>(sum), inv_n, static_cast<double>(eps) * s * s));
}

template <class Passes>
void RmsNormRow(const float* x, size_t n, double inv_n, const float* weight, float eps, float* y) {
  float sum = 0.0f, scale = 1.0f;
  if (!ScaledSquareSum<Passes>(x, n, 0.0f, 0.0f, false, &sum, &scale)) return FillRow(y, n, kQuietNaN);
  if (sum == 0.0f && eps == 0.0f) return FillRow(y, n, 0.0f);
  Passes::Apply(x, n, 0.0f, 0.0f, scale, NormGain<Passes>(sum, inv_n, eps, scale), weight, nullptr, false, y);
}

template <class Passes>
void LayerNormRow(const float* x, size_t n, double inv_n, const float* weight, const float* bias, float eps, float* y) {
  // The mean as a float-float pair (hi, lo); a float sum that overflowed is redone on x * 2^-64 (exact).
  double total = Passes::RowSum(x, n, 1.0f);
  if (!(total - total == 0.0)) total = Passes::RowSum(x, n, 0x1p-64f) * 0x1p64;
  if (!(total - total == 0.0)) return FillRow(y, n, kQuietNaN);
  // A division, not total * inv_n: for a constant row n * x / n is x exactly (the sum of at most 2^29 floats of
  // one value is exact in double), so lo is 0 and the row's deviations are exactly 0, as the contract's constant
  // rows need (inv_n, rounded, made lo nonzero for n = 3, 5, 6, ...: found by layers_fuzzer).
  const double mean = total / static_cast<double>(n);
  const float hi = static_cast<float>(mean);
  const float lo = static_cast<float>(mean - static_cast<double>(hi));
  float sum = 0.0f, scale = 1.0f;
  if (!ScaledSquareSum<Passes>(x, n, hi, lo, true, &sum, &scale)) return FillRow(y, n, kQuietNaN);
  if (sum == 0.0f && eps == 0.0f) {
    if (bias == nullptr) return FillRow(y, n, 0.0f);
    for (size_t j = 0; j < n; ++j) y[j] = bias[j];
    return;
  }
  Passes::Apply(x, n, hi, lo, scale, NormGain<Passes>(sum, inv_n, eps, scale), weight, bias, true, y);
}

template <class Passes>
void RmsNormRows(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y) {
  const double inv_n = 1.0 / static_cast<double>(cols);
  for (size_t r = 0; r < rows; ++r) RmsNormRow<Passes>(x + r * cols, cols, inv_n, weight, eps, y + r * cols);
}

template <class Passes>
void LayerNormRows(const float* x, size_t rows, size_t cols, const float* weight, const float* bias, float eps,
                   float* y) {
  const double inv_n = 1.0 / static_cast<double>(cols);
  for (size_t r = 0; r < rows; ++r) LayerNormRow<Passes>(x + r * cols, cols, inv_n, weight, bias, eps, y + r * cols);
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_NORM_NORM_SCALAR_H_

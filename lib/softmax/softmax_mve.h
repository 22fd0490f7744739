// SPDX-License-Identifier: Apache-2.0
// Softmax of one row on Helium (MVE): the algorithm of softmax_scalar.h in three passes as softmax-inl.h does
// (max; exp, store and compensated sum; corrected division), with float lanes and 2Sum for the row sum (MVE has
// no double lanes). Contract: softmax.h, the round-to-nearest bound whatever the caller's mode for the vector
// steps (MVE always rounds to nearest, lib/common/mve.h); the lane combination, the reciprocal of the sum and the
// special-value rules run on the scalar FPU as on every path.
#ifndef EDGEATTN_LIB_SOFTMAX_SOFTMAX_MVE_H_
#define EDGEATTN_LIB_SOFTMAX_SOFTMAX_MVE_H_

#include "lib/common/float_util.h"
#include "lib/common/mve.h"
#include "lib/exp/exp_mve.h"
#include "lib/softmax/softmax_scalar.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// max of the row, NaN ignored (VMAXNM): a row whose only non-NaN entries are finite gets a finite max, and its
// NaN entries then make the row sum NaN (the exp of NaN is NaN), which the caller turns into a NaN row; a row of
// NaN and -inf only gets -inf, and SoftmaxRowNonFiniteMax finds the NaN. Two chains: VMAXNM waits on its input.
inline float RowMax(const float* in, size_t n) {
  const float32x4_t neg_inf = vdupq_n_f32(-internal::kInfinity);
  float32x4_t m0 = neg_inf, m1 = neg_inf;
  size_t j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    m0 = vmaxnmq_f32(m0, vldrwq_f32(in + j));
    m1 = vmaxnmq_f32(m1, vldrwq_f32(in + j + kLanes));
  }
  for (; j + kLanes <= n; j += kLanes) m0 = vmaxnmq_f32(m0, vldrwq_f32(in + j));
  if (j < n) m1 = vpselq_f32(vmaxnmq_f32(m1, LoadTail(in + j, n - j)), m1, FirstLanes(n - j));
  return vmaxnmvq_f32(-internal::kInfinity, vmaxnmq_f32(m0, m1));
}

// e^(x - m) with the rounding error of x - m (2Sum, exact: MVE rounds to nearest) folded into the exponent.
inline float32x4_t ExpMinusMax(float32x4_t x, float32x4_t neg_m) {
  const float32x4_t d = vaddq_f32(x, neg_m);
  const float32x4_t bb = vsubq_f32(d, x);
  const float32x4_t d_lo = vaddq_f32(vsubq_f32(x, vsubq_f32(d, bb)), vsubq_f32(neg_m, bb));
  return ExpRr2P6Shifted(d, d_lo);
}

// sum += e per lane, its rounding error kept in compensation (2Sum).
inline void AddCompensated(float32x4_t e, float32x4_t& sum, float32x4_t& compensation) {
  const float32x4_t next = vaddq_f32(sum, e);
  const float32x4_t bb = vsubq_f32(next, sum);
  compensation = vaddq_f32(compensation, vaddq_f32(vsubq_f32(sum, vsubq_f32(next, bb)), vsubq_f32(e, bb)));
  sum = next;
}

// The lanes' sums and errors combined with 2Sum on the scalar FPU (as RowSumTotal of softmax-inl.h).
inline float CompensatedTotal(float32x4_t sum, float32x4_t compensation) {
  float total = 0.0f, error = 0.0f;
  internal::AddCompensated(vgetq_lane_f32(sum, 0), total, error);
  internal::AddCompensated(vgetq_lane_f32(sum, 1), total, error);
  internal::AddCompensated(vgetq_lane_f32(sum, 2), total, error);
  internal::AddCompensated(vgetq_lane_f32(sum, 3), total, error);
  return total + (error + SumLanes(compensation));
}

// out = e^(in - m) for the row (finite m); returns the compensated row sum.
inline float ExpRowAndSum(const float* in, float* out, size_t n, float m) {
  const float32x4_t neg_m = vdupq_n_f32(-m);
  float32x4_t sum = vdupq_n_f32(0.0f), compensation = sum;
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const float32x4_t e = ExpMinusMax(vldrwq_f32(in + j), neg_m);
    vstrwq_f32(out + j, e);
    AddCompensated(e, sum, compensation);
  }
  if (j < n) {
    // Lanes past the row are -inf (the predicated load's zeros replaced): their exp is exactly +0.
    const float32x4_t x = vpselq_f32(LoadTail(in + j, n - j), vdupq_n_f32(-internal::kInfinity), FirstLanes(n - j));
    const float32x4_t e = ExpMinusMax(x, neg_m);
    StoreTail(out + j, e, n - j);
    AddCompensated(e, sum, compensation);
  }
  return CompensatedTotal(sum, compensation);
}

// e / total with one Newton correction: q + (e - q total) / total, the residual exact in one VFMA with -total as
// its scalar operand (MVE rounds to nearest, so this is CorrectedQuotient's value, and +0 stays +0).
inline float32x4_t CorrectedQuotient(float32x4_t e, float total, float inv) {
  const float32x4_t q = vmulq_n_f32(e, inv);
  return vfmaq_n_f32(q, vfmaq_n_f32(e, q, -total), inv);
}

inline void DivideRow(float* out, size_t n, float total) {
  const float inv = 1.0f / total;
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) vstrwq_f32(out + j, CorrectedQuotient(vldrwq_f32(out + j), total, inv));
  if (j < n) StoreTail(out + j, CorrectedQuotient(LoadTail(out + j, n - j), total, inv), n - j);
}

// Softmax of one row of n >= 1 floats; in == out allowed.
inline void SoftmaxRowMve(const float* in, float* out, size_t n) {
  const float m = RowMax(in, n);
  if (!internal::IsFinite(m)) return internal::SoftmaxRowNonFiniteMax(in, out, n, m);
  const float total = ExpRowAndSum(in, out, n, m);
  if (total != total) return internal::FillRow(out, n, internal::kQuietNaN);  // a NaN below a finite max
  DivideRow(out, n, total);
}

inline void SoftmaxRowsMve(const float* in, float* out, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) SoftmaxRowMve(in + r * cols, out + r * cols, cols);
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_SOFTMAX_SOFTMAX_MVE_H_

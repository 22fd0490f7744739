// SPDX-License-Identifier: Apache-2.0
// Softmax of one row on Highway vectors: the algorithm of softmax_scalar.h, three passes over the row
// (max; exp, store and compensated sum; corrected division).

#if defined(EDGEATTN_LIB_SOFTMAX_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_SOFTMAX_SOFTMAX_INL_H_
#undef EDGEATTN_LIB_SOFTMAX_SOFTMAX_INL_H_
#else
#define EDGEATTN_LIB_SOFTMAX_SOFTMAX_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/common/stack_vector.h"
#include "lib/exp/exp-inl.h"
#include "lib/softmax/softmax_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The row's max in every lane (kept as a vector: the exp's -m is then one negation of it, not a scalar broadcast on a
// short row's path). kWithMin: the row's least value too, in every lane of *vmin (for RowTakesFastExp; a NaN in the
// row may leave any value there, which is harmless: such a row's sum is NaN whichever exp its lanes took).
template <bool kWithMin = false, class D, class V = hn::VFromD<D>>
HWY_INLINE V RowMax(D d, const float* in, size_t n, V* vmin = nullptr) {
  const size_t N = hn::Lanes(d);
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  // Independent accumulators: Max has a latency of several cycles and the loop would wait on it.
  auto m0 = neg_inf, m1 = neg_inf;
  auto lo0 = hn::Set(d, internal::kInfinity), lo1 = lo0;
  size_t j = 0;
  for (; j + 2 * N <= n; j += 2 * N) {
    const auto x0 = hn::LoadU(d, in + j), x1 = hn::LoadU(d, in + j + N);
    m0 = hn::Max(m0, x0);
    m1 = hn::Max(m1, x1);
    if constexpr (kWithMin) lo0 = hn::Min(lo0, x0), lo1 = hn::Min(lo1, x1);
  }
  for (; j + N <= n; j += N) {
    const auto x = hn::LoadU(d, in + j);
    m0 = hn::Max(m0, x);
    if constexpr (kWithMin) lo0 = hn::Min(lo0, x);
  }
  if (j < n) {
    const auto x = LoadTail(d, in + j, n - j);
    const auto valid = hn::FirstN(d, n - j);
    m1 = hn::Max(m1, hn::IfThenElse(valid, x, neg_inf));
    if constexpr (kWithMin) lo1 = hn::Min(lo1, hn::IfThenElse(valid, x, hn::Set(d, internal::kInfinity)));
  }
  if constexpr (kWithMin) *vmin = hn::MinOfLanes(d, hn::Min(lo0, lo1));
#if HWY_TARGET == HWY_EMU128
  // Highway 1.0.3's EMU128 MaxOfLanes starts from -FLT_MAX: a row of -inf would get the finite max -FLT_MAX
  // (and then 0/0). Reduce the lanes here instead.
  HWY_ALIGN float lanes[hn::MaxLanes(D())];
  static_assert(sizeof(lanes) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  hn::Store(hn::Max(m0, m1), d, lanes);
  float m = lanes[0];
  for (size_t k = 1; k < N; ++k) m = lanes[k] > m ? lanes[k] : m;
  return hn::Set(d, m);
#else
  return hn::MaxOfLanes(d, hn::Max(m0, m1));
#endif
}

// The row sum of the exponentials, accumulated without losing accuracy as rows grow.
//
// Where double vectors are cheap, each vector of e is widened and added in double: the sum is then exact to
// 2^-53 per term, and the lanes reduce with one SumOfLanes. Elsewhere (ARMv7 NEON has no double vectors;
// Highway's SCALAR and EMU128 targets emulate them, and on Cortex-M doubles are software), every lane keeps a
// float sum and its rounding error (2Sum), and the lanes are combined with 2Sum too. The double variant exists
// for speed: combining 2 x 16 float lanes with 2Sum is a serial chain of ~130 dependent additions, which cost
// more than a whole 16-element row.
// Two accumulator vectors (locals of SoftmaxRow: SVE vectors cannot be class members) of type RowSumD<D>.
#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
// Double lanes: acc0 sums the lower half of each vector of e, acc1 the upper half.
template <class D>
using RowSumD = hn::Repartition<double, D>;

template <class D, class VD>
HWY_INLINE void RowSumAdd(D d, hn::VFromD<D> e, VD& acc0, VD& acc1) {
  const RowSumD<D> dd;
  const hn::Half<D> dh;
  (void)d;
  acc0 = hn::Add(acc0, hn::PromoteTo(dd, hn::LowerHalf(dh, e)));
  acc1 = hn::Add(acc1, hn::PromoteTo(dd, hn::UpperHalf(dh, e)));
}

template <class D, class VD>
HWY_INLINE float RowSumTotal(D d, VD acc0, VD acc1) {
  (void)d;
  const RowSumD<D> dd;
  return static_cast<float>(hn::GetLane(hn::SumOfLanes(dd, hn::Add(acc0, acc1))));
}

// The long rows' sum, two vectors of e = e^(x - m) 2^64 <= 2^64 per step: widening every vector to double (two
// conversions, a shuffle, two additions) cost the loop more than a tenth of its time. Instead each lane keeps a
// float s that starts at kRowSumOffset = 2^65 > every term, so Fast2Sum (s + e, and e - ((s + e) - s), exact because
// s's exponent is at least e's) gives each addition's rounding error exactly, summed in a float c: four additions.
// Every kRowSumBlock steps both go to the double lanes, (s - 2^65) exactly and c. Within a block a lane's c holds at
// most K = kRowSumBlock errors of at most 2^-24 s each and rounds K times, an error below K^2 (K + 2) 2^-48 of the
// 2^64 that the row's max term alone contributes, summed over 32 lanes: 2^-28 of the sum for K = 32 (the double
// sum's own error is below 2^-47): at most 0.07 ULP of the 4-ULP bound, which the measured 2.7 left room for.
constexpr float kRowSumOffset = 0x1p65f;
constexpr size_t kRowSumBlock = 32;

template <class D, class VD>
HWY_INLINE void RowSumFlush(D d, hn::VFromD<D> s, hn::VFromD<D> c, VD& acc0, VD& acc1) {
  (void)d;
  const RowSumD<D> dd;
  const hn::Half<D> dh;
  const VD offset = hn::Set(dd, static_cast<double>(kRowSumOffset));
  acc0 = hn::Add(
      acc0, hn::Add(hn::Sub(hn::PromoteTo(dd, hn::LowerHalf(dh, s)), offset), hn::PromoteTo(dd, hn::LowerHalf(dh, c))));
  acc1 = hn::Add(
      acc1, hn::Add(hn::Sub(hn::PromoteTo(dd, hn::UpperHalf(dh, s)), offset), hn::PromoteTo(dd, hn::UpperHalf(dh, c))));
}

#else
// Float lanes: acc0 is the sum, acc1 its rounding error (2Sum).
template <class D>
using RowSumD = D;

template <class D, class V>
HWY_INLINE void RowSumAdd(D d, V e, V& acc0, V& acc1) {
  (void)d;
  const V next = hn::Add(acc0, e);
  const V bb = hn::Sub(next, acc0);
  acc1 = hn::Add(acc1, hn::Add(hn::Sub(acc0, hn::Sub(next, bb)), hn::Sub(e, bb)));
  acc0 = next;
}

template <class D, class V>
HWY_INLINE float RowSumTotal(D d, V acc0, V acc1) {
  HWY_ALIGN float sums[hn::MaxLanes(D())];
  HWY_ALIGN float compensations[hn::MaxLanes(D())];
  static_assert(sizeof(sums) <= internal::kMaxStackVectorBytes, "lane buffer larger than one bounded vector");
  hn::Store(acc0, d, sums);
  hn::Store(acc1, d, compensations);
  float sum = 0.0f, compensation = 0.0f;
  for (size_t k = 0; k < hn::Lanes(d); ++k) {
    internal::AddCompensated(sums[k], sum, compensation);
    compensation += compensations[k];
  }
  return sum + compensation;
}

#endif

// e^(x - m) with the rounding error of x - m folded in (see SoftmaxRowScalar). kToNearest: see ExpRoundedSum.
// kTimes2To64: e^(x - m) 2^64 (ExpRr2P6ShiftedTimes2To64), for the softmax row, whose quotient cancels it.
template <bool kToNearest, bool kTimes2To64 = false, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpMinusMaxIn(D d, V x, V neg_m) {
  const V dv = hn::Add(x, neg_m);
  const V bb = hn::Sub(dv, x);
  const V d_lo = hn::Add(hn::Sub(x, hn::Sub(dv, bb)), hn::Sub(neg_m, bb));
  if constexpr (kTimes2To64) return ExpRr2P6ShiftedTimes2To64<kToNearest>(d, dv, d_lo);
  return ExpRr2P6Shifted<kToNearest>(d, dv, d_lo);
}

// Where rows may take ExpMinusMaxFastRow: targets with double vectors (the softmax row's offset sums) on x86 and
// AArch64. Elsewhere (ARMv7 NEON flushes subnormals, so its Fast2Sum need not be exact) every row takes ExpMinusMaxIn.
#if (HWY_ARCH_X86 || HWY_ARCH_ARM_A64) && HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
constexpr bool kFastExpRows = true;
#else
constexpr bool kFastExpRows = false;
#endif

// ExpMinusMaxIn<true, kTimes2To64> for a row that passes RowTakesFastExp, rounding to nearest, with the same bits
// and 5 operations fewer per vector: x - m's rounding error by Fast2Sum(-m, x) (two operations where 2Sum takes
// five), exact because m's exponent is at least x's, and no flush to +0, which no lane at or above kShiftedMinArg
// needs. Both give the one exact error, so e^(x - m) is the same float.
template <bool kTimes2To64 = false, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpMinusMaxFastRow(D d, V x, V neg_m) {
  const V dv = hn::Add(x, neg_m);
  const V d_lo = hn::Sub(x, hn::Sub(dv, neg_m));
  return ExpScaledBy64<true, true, kTimes2To64>(d, dv, d_lo);
}

// ExpMinusMaxFastRow where kFast (a row that passes RowTakesFastExp, rounding to nearest), else ExpMinusMaxIn.
template <bool kToNearest, bool kFast, bool kTimes2To64 = false, class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpMinusMaxOfRow(D d, V x, V neg_m) {
  static_assert(kToNearest || !kFast, "Fast2Sum is exact when rounding to nearest");
  if constexpr (kFast) return ExpMinusMaxFastRow<kTimes2To64>(d, x, neg_m);
  return ExpMinusMaxIn<kToNearest, kTimes2To64>(d, x, neg_m);
}

// The same for callers (attention's loops) that do not read the rounding mode themselves: exactly
// ExpMinusMaxIn<true>, the default environment's operations at their cost. Under a directed mode n may then be
// the floor or ceiling and the result up to 270 ULP off (special values stay exact: e^0 = 1, -inf and
// d < kShiftedMinArg give +0, NaN gives NaN). Every variant that makes this mode-proof inside a loop it does
// not own costs that loop in the default environment (measured: a branch between two inlined variants +6
// instructions per two vectors on AVX2 and +38 on NEON, where the constants no longer stay in registers; a
// shifted argument +2 to +9; AVX-512's embedded-rounding FMA +2 loads, having no memory operand), so the caller
// should read ExpToNearest() once, outside its loops, and call ExpMinusMaxIn<kToNearest>, as SoftmaxRow does.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpMinusMax(D d, V x, V neg_m) {
  return ExpMinusMaxIn<true>(d, x, neg_m);
}

// e^(x - m) 2^64 of the row's pairs of vectors, stored and added to the lane sums one vector at a time; returns
// the first index not done (fewer than 2N left).
template <bool kToNearest, class D, class VS>
HWY_INLINE size_t ExpRowPairsEach(D d, const float* in, float* out, size_t n, hn::VFromD<D> neg_m, VS& acc0, VS& acc1) {
  const size_t N = hn::Lanes(d);
  size_t j = 0;
  for (; j + 2 * N <= n; j += 2 * N) {
    const auto e0 = ExpMinusMaxIn<kToNearest, true>(d, hn::LoadU(d, in + j), neg_m);
    const auto e1 = ExpMinusMaxIn<kToNearest, true>(d, hn::LoadU(d, in + j + N), neg_m);
    hn::StoreU(e0, d, out + j);
    hn::StoreU(e1, d, out + j + N);
    RowSumAdd(d, e0, acc0, acc1);
    RowSumAdd(d, e1, acc0, acc1);
  }
  return j;
}

#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
// The same with the offset Fast2Sum sums of RowSumFlush's comment, flushed to the double lanes every kRowSumBlock
// steps. Rounding to nearest only: under a directed mode the error of s + e need not be a float (rounding a tiny e
// up to s + ulp(s) leaves e - ulp(s)), and Fast2Sum would not be exact.
template <bool kFast, class D, class VD>
HWY_INLINE size_t ExpRowPairsOffset(D d, const float* in, float* out, size_t n, hn::VFromD<D> neg_m, VD& acc0,
                                    VD& acc1) {
  const size_t N = hn::Lanes(d);
  size_t j = 0;
  while (j + 2 * N <= n) {
    auto s0 = hn::Set(d, kRowSumOffset), s1 = s0, c0 = hn::Zero(d), c1 = hn::Zero(d);
    const size_t steps = HWY_MIN(kRowSumBlock, (n - j) / (2 * N));
    for (size_t step = 0; step < steps; ++step, j += 2 * N) {
      const auto e0 = ExpMinusMaxOfRow<true, kFast, true>(d, hn::LoadU(d, in + j), neg_m);
      const auto e1 = ExpMinusMaxOfRow<true, kFast, true>(d, hn::LoadU(d, in + j + N), neg_m);
      hn::StoreU(e0, d, out + j);
      hn::StoreU(e1, d, out + j + N);
      const auto t0 = hn::Add(s0, e0), t1 = hn::Add(s1, e1);
      c0 = hn::Add(c0, hn::Sub(e0, hn::Sub(t0, s0)));
      c1 = hn::Add(c1, hn::Sub(e1, hn::Sub(t1, s1)));
      s0 = t0;
      s1 = t1;
    }
    RowSumFlush(d, s0, c0, acc0, acc1);
    RowSumFlush(d, s1, c1, acc0, acc1);
  }
  return j;
}
#endif

template <bool kToNearest, bool kFast, class D, class VS>
HWY_INLINE size_t ExpRowPairs(D d, const float* in, float* out, size_t n, hn::VFromD<D> neg_m, VS& acc0, VS& acc1) {
#if HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  if constexpr (kToNearest) return ExpRowPairsOffset<kFast>(d, in, out, n, neg_m, acc0, acc1);
#endif
  static_assert(!kFast || kToNearest, "Fast2Sum is exact when rounding to nearest");
  return ExpRowPairsEach<kToNearest>(d, in, out, n, neg_m, acc0, acc1);
}

// e / total per lane, corrected by one Newton step (CorrectedQuotient in softmax_scalar.h), vinv = 1 / total.
template <class V>
HWY_INLINE V CorrectedQuotientV(V e, V vtotal, V vinv) {
  const V q = hn::Mul(e, vinv);
  return hn::NegMulAdd(hn::MulSub(q, vtotal, e), vinv, q);
}

// Rows of at most kDivideMaxVectors vectors divide by the row sum (x86, where a vector division is the IEEE one; ARMv7
// NEON's Div is a reciprocal estimate with Newton steps, not correctly rounded). One vector: Intel's 512-bit division
// issues once per 16 cycles, so rows of 4 and 16 vectors lost 7% and 17% there to it against the corrected quotient
// (docs/performance.md, "Short rows" and "The short exp").
#if HWY_ARCH_X86
constexpr bool kDivideShortRows = true;
#else
constexpr bool kDivideShortRows = false;
#endif
constexpr size_t kDivideMaxVectors = 1;

// Softmax of one row of n >= 1 floats whose max, finite, is every lane of vmax; in == out allowed. The exponentials are
// stored and summed as e^(x - m) 2^64: the quotient is the same (every e^(x - m) the exp does not flush to +0 is
// normal, so the scaling is exact throughout) and each vector saves a multiply. kFast: the row passes RowTakesFastExp
// (every whole vector takes ExpMinusMaxFastRow; the padded tail keeps the flush of its -inf lanes).
template <bool kToNearest, bool kFast = false, class D>
HWY_INLINE void SoftmaxRowFiniteMax(D d, const float* in, float* out, size_t n, hn::VFromD<D> vmax) {
  const size_t N = hn::Lanes(d);
  const auto neg_m = hn::Neg(vmax);
  const RowSumD<decltype(d)> ds;
  auto acc0 = hn::Zero(ds), acc1 = hn::Zero(ds);
  size_t j = ExpRowPairs<kToNearest, kFast>(d, in, out, n, neg_m, acc0, acc1);
  for (; j + N <= n; j += N) {
    const auto e = ExpMinusMaxOfRow<kToNearest, kFast, true>(d, hn::LoadU(d, in + j), neg_m);
    hn::StoreU(e, d, out + j);
    RowSumAdd(d, e, acc0, acc1);
  }
  if (j < n) {
    const size_t rest = n - j;
    // Padding lanes are -inf, whose exp is exactly 0.
    const auto x = hn::IfThenElse(hn::FirstN(d, rest), LoadTail(d, in + j, rest), hn::Set(d, -internal::kInfinity));
    const auto e = ExpMinusMaxIn<kToNearest, true>(d, x, neg_m);
    StoreTail(d, e, out + j, rest);
    RowSumAdd(d, e, acc0, acc1);
  }
  const float total = RowSumTotal(d, acc0, acc1);
  if (total != total) return internal::FillRow(out, n, internal::kQuietNaN);  // a NaN below a finite max

  const auto vtotal = hn::Set(d, total);
  if (kDivideShortRows && n <= kDivideMaxVectors * N) {
    // A short row's time is its latency: one vector division per vector is the reciprocal's latency alone, where the
    // reciprocal, its broadcast and the correction below are three more dependent steps. The quotient is the
    // correctly rounded one, which the corrected quotient (with FMA) also gives wherever it is normal.
    j = 0;
    for (; j + N <= n; j += N) hn::StoreU(hn::Div(hn::LoadU(d, out + j), vtotal), d, out + j);
    if (j < n) StoreTail(d, hn::Div(LoadTail(d, out + j, n - j), vtotal), out + j, n - j);
    return;
  }
  const auto vinv = hn::Set(d, 1.0f / total);
  j = 0;
  for (; j + N <= n; j += N) hn::StoreU(CorrectedQuotientV(hn::LoadU(d, out + j), vtotal, vinv), d, out + j);
  if (j < n) StoreTail(d, CorrectedQuotientV(LoadTail(d, out + j, n - j), vtotal, vinv), out + j, n - j);
}

#if (HWY_ARCH_X86 || HWY_TARGET == HWY_NEON) && HWY_HAVE_FLOAT64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
// Rows of two to kRegisterRowVectors vectors (17 to 128 floats with AVX-512, 9 to 32 with AVX2, 5 to 32 with
// AArch64 NEON; not on SVE, whose sizeless vectors cannot form the array below): the time of such a row is its
// dependency chain, so the row is loaded once and stays in registers, with no store of e and no reload between the
// passes, and its sum needs no offset sums: each vector of exact float terms e^(x - m) 2^64 is widened and added in
// double lanes (at most 127 additions of nonnegative terms, an error below 2^-46 of the sum before it is rounded to
// float). The last vector's lanes past n hold the first vector's lanes (row values, which change neither the max nor
// the least value); their exponentials are zeroed before the sum and never stored.
// Eight vectors where the target has 32 vector registers (AVX-512, AArch64); four where it has 16 (AVX2 and below:
// eight spill there, and rows of six and eight AVX2 vectors ran slower than the general path).
#if HWY_ARCH_X86 && HWY_TARGET > HWY_AVX3
constexpr size_t kRegisterRowVectors = 4;
#else
constexpr size_t kRegisterRowVectors = 8;
#endif

// The exp pass, the sum and the quotient of such a row, rounding to nearest, whose max vmax is finite. kFast: the row
// passes RowTakesFastExp.
template <size_t K, bool kFast, class D, class V = hn::VFromD<D>>
HWY_INLINE void SoftmaxRegisterRowFiniteMax(D d, V* x, hn::Mask<D> valid, V vmax, float* out, size_t n) {
  const size_t N = hn::Lanes(d);
  const RowSumD<D> dd;
  const V neg_m = hn::Neg(vmax);
  auto acc0 = hn::Zero(dd), acc1 = hn::Zero(dd);
  for (size_t k = 0; k < K; ++k) {
    x[k] = ExpMinusMaxOfRow<true, kFast, true>(d, x[k], neg_m);
    if (k == K - 1) x[k] = hn::IfThenElseZero(valid, x[k]);
    RowSumAdd(d, x[k], acc0, acc1);
  }
  const float total = RowSumTotal(d, acc0, acc1);
  if (total != total) return internal::FillRow(out, n, internal::kQuietNaN);  // a NaN below a finite max
  const V vtotal = hn::Set(d, total), vinv = hn::Set(d, 1.0f / total);
  for (size_t k = 0; k < K; ++k) {
    const V y = CorrectedQuotientV(x[k], vtotal, vinv);
    if (k < K - 1) {
      hn::StoreU(y, d, out + k * N);
    } else {
      StoreTail(d, y, out + k * N, n - k * N);
    }
  }
}

// SoftmaxRowFiniteMax under a directed rounding mode, one copy for every register row.
template <class D>
HWY_NOINLINE void SoftmaxRowDirected(D d, const float* in, float* out, size_t n, hn::VFromD<D> vmax) {
  SoftmaxRowFiniteMax<false>(d, in, out, n, vmax);
}

// Softmax of a row of K vectors, the last holding 1 to N of the row's n floats; in == out allowed (the whole row is
// loaded before anything is stored). Not inlined: in SoftmaxRow its registers and stack frame cost the other rows.
template <size_t K, class D, class V = hn::VFromD<D>>
HWY_NOINLINE void SoftmaxRegisterRow(D d, const float* in, float* out, size_t n) {
  const size_t N = hn::Lanes(d);
  const size_t last = n - (K - 1) * N;
  const auto valid = hn::FirstN(d, last);
  V x[K];
  for (size_t k = 0; k + 1 < K; ++k) x[k] = hn::LoadU(d, in + k * N);
  x[K - 1] = hn::IfThenElse(valid, LoadTail(d, in + (K - 1) * N, last), x[0]);
  V hi = x[0], lo = x[0];
  for (size_t k = 1; k < K; ++k) hi = hn::Max(hi, x[k]), lo = hn::Min(lo, x[k]);
  const V vmax = hn::MaxOfLanes(d, hi);
  const float m = hn::GetLane(vmax);
  if (!internal::IsFinite(m)) return internal::SoftmaxRowNonFiniteMax(in, out, n, m);
  if (HWY_UNLIKELY(!ExpToNearest())) return SoftmaxRowDirected(d, in, out, n, vmax);
  if (internal::RowTakesFastExp(hn::GetLane(hn::MinOfLanes(d, lo)), m)) {
    return SoftmaxRegisterRowFiniteMax<K, true>(d, x, valid, vmax, out, n);
  }
  SoftmaxRegisterRowFiniteMax<K, false>(d, x, valid, vmax, out, n);
}

// The register row of K to kRegisterRowVectors vectors that holds n <= kRegisterRowVectors N floats.
template <size_t K, class D>
HWY_INLINE void SoftmaxRegisterRowOf(D d, const float* in, float* out, size_t n) {
  if constexpr (K < kRegisterRowVectors) {
    if (n > K * hn::Lanes(d)) return SoftmaxRegisterRowOf<K + 1>(d, in, out, n);
  }
  SoftmaxRegisterRow<K>(d, in, out, n);
}

// The register rows for n in (N, kRegisterRowVectors N]; false for any other n.
template <class D>
HWY_INLINE bool SoftmaxShortRow(D d, const float* in, float* out, size_t n) {
  const size_t N = hn::Lanes(d);
  if (n <= N || n > kRegisterRowVectors * N) return false;
  SoftmaxRegisterRowOf<2>(d, in, out, n);
  return true;
}
#else
template <class D>
HWY_INLINE bool SoftmaxShortRow(D /* d */, const float* /* in */, float* /* out */, size_t /* n */) {
  return false;
}
#endif

// Rows of at least this many vectors look for their least value beside the max (one more operation per vector in
// that pass), to take ExpMinusMaxFastRow (five fewer per vector) where RowTakesFastExp allows.
constexpr size_t kFastExpMinVectors = 2;

// Softmax of one row of n >= 1 floats; in == out allowed.
inline void SoftmaxRow(const float* in, float* out, size_t n) {
  // The full vector on every target but RVV, whose register groups would outgrow the lane buffers' bound.
  const hn::CappedTag<float, internal::kMaxStackVectorBytes / sizeof(float)> d;
  if (SoftmaxShortRow(d, in, out, n)) return;
  auto vmin = hn::Set(d, internal::kQuietNaN);  // NaN: RowTakesFastExp is false
  const auto vmax =
      kFastExpRows && n >= kFastExpMinVectors * hn::Lanes(d) ? RowMax<true>(d, in, n, &vmin) : RowMax(d, in, n);
  const float m = hn::GetLane(vmax);
  if (!internal::IsFinite(m)) return internal::SoftmaxRowNonFiniteMax(in, out, n, m);
  if (HWY_LIKELY(ExpToNearest())) {
    if (internal::RowTakesFastExp(hn::GetLane(vmin), m))
      return SoftmaxRowFiniteMax<true, kFastExpRows>(d, in, out, n, vmax);
    return SoftmaxRowFiniteMax<true>(d, in, out, n, vmax);
  }
  SoftmaxRowFiniteMax<false>(d, in, out, n, vmax);
}

inline void SoftmaxRows(const float* in, float* out, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
#if HWY_TARGET == HWY_SCALAR  // one lane: the scalar path's loop, fewer instructions (docs/performance.md, "One lane")
    internal::SoftmaxRowScalar(in + r * cols, out + r * cols, cols);
#else
    SoftmaxRow(in + r * cols, out + r * cols, cols);
#endif
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

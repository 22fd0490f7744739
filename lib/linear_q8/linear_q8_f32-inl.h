// SPDX-License-Identifier: Apache-2.0
// linear_q8's ACT_F32 on Highway vectors: no workspace; per output a float dot of x with the converted int8 row, one
// accumulator per group scaled into the row's sum by a MulAdd (group_size a multiple of the lanes; else the scalar
// path's loop). Every block below sums each (row, output) in the same operations and order as
// LinearQ8F32Block1x4, so an output's bits do not depend on the block that computed it.

#if defined(EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_F32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_F32_INL_H_
#undef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_F32_INL_H_
#else
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_F32_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/common/prefetch-inl.h"
#include "lib/linear_q8/linear_q8_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes int8 values from p as floats: the one int8 -> f32 vector load of the kernel (exact).
template <class D>
HWY_INLINE hn::Vec<D> LoadQ8AsFloat(D d, const int8_t* HWY_RESTRICT p) {
  const hn::Rebind<int8_t, D> d8;
  const hn::RebindToSigned<D> di;
  return hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, p)));
}

// ACT_F32 for outputs o .. o + 3 of one row (w0..w3 repeat the last row where fewer are left): per group one
// FMA chain per output over the converted int8 values, then acc += chain * scale.
template <class D>
HWY_INLINE void LinearQ8F32Block1x4(D d, const float* HWY_RESTRICT x, const internal::LinearQ8Problem& p, size_t o,
                                    size_t count, float sums[4]) {
  const size_t N = hn::Lanes(d), in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  const size_t last = o + count - 1;
  const int8_t* w0 = p.w.q + o * in;
  const int8_t* w1 = p.w.q + (count > 1 ? o + 1 : last) * in;
  const int8_t* w2 = p.w.q + (count > 2 ? o + 2 : last) * in;
  const int8_t* w3 = p.w.q + (count > 3 ? o + 3 : last) * in;
  const float* s0 = p.w.scale + o * groups;
  const float* s1 = p.w.scale + (count > 1 ? o + 1 : last) * groups;
  const float* s2 = p.w.scale + (count > 2 ? o + 2 : last) * groups;
  const float* s3 = p.w.scale + (count > 3 ? o + 3 : last) * groups;
  auto acc0 = hn::Zero(d), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (size_t g = 0; g < groups; ++g) {
    auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = g * gs; i < (g + 1) * gs; i += N) {
      const auto xv = hn::LoadU(d, x + i);
      a0 = hn::MulAdd(xv, LoadQ8AsFloat(d, w0 + i), a0), a1 = hn::MulAdd(xv, LoadQ8AsFloat(d, w1 + i), a1);
      a2 = hn::MulAdd(xv, LoadQ8AsFloat(d, w2 + i), a2), a3 = hn::MulAdd(xv, LoadQ8AsFloat(d, w3 + i), a3);
    }
    acc0 = hn::MulAdd(a0, hn::Set(d, s0[g]), acc0), acc1 = hn::MulAdd(a1, hn::Set(d, s1[g]), acc1);
    acc2 = hn::MulAdd(a2, hn::Set(d, s2[g]), acc2), acc3 = hn::MulAdd(a3, hn::Set(d, s3[g]), acc3);
  }
  sums[0] = hn::GetLane(hn::SumOfLanes(d, acc0)), sums[1] = hn::GetLane(hn::SumOfLanes(d, acc1));
  sums[2] = hn::GetLane(hn::SumOfLanes(d, acc2)), sums[3] = hn::GetLane(hn::SumOfLanes(d, acc3));
}

// ACT_F32 for outputs o .. o + 7 of one row, each output summed exactly as LinearQ8F32Block1x4 sums it (the same
// bits). Eight rows of W side by side: a decode reads them once, from DRAM in a model, and this x86 core streams
// eight rows far better than four (docs/performance.md, "Streaming the weights").
template <class D>
HWY_INLINE void LinearQ8F32Block1x8(D d, const float* HWY_RESTRICT x, const internal::LinearQ8Problem& p, size_t o,
                                    float sums[8]) {
  const size_t N = hn::Lanes(d), in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  const int8_t* w = p.w.q + o * in;
  const int8_t* w4 = w + 4 * in;
  const float* s = p.w.scale + o * groups;
  auto acc0 = hn::Zero(d), acc1 = acc0, acc2 = acc0, acc3 = acc0, acc4 = acc0, acc5 = acc0, acc6 = acc0, acc7 = acc0;
  const Ahead ahead = NextRowsAhead(in, 8);
  const int8_t* next = ahead != Ahead::kNone && o + 16 <= p.o_end ? w + 8 * in : nullptr;
  for (size_t g = 0; g < groups; ++g) {
    auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    if (next != nullptr)
      PrefetchBytes(ahead, next, g * gs * 8, (g + 1) * gs * 8);  // what this group reads of these rows
    for (size_t i = g * gs; i < (g + 1) * gs; i += N) {
      const auto xv = hn::LoadU(d, x + i);
      a0 = hn::MulAdd(xv, LoadQ8AsFloat(d, w + i), a0), a1 = hn::MulAdd(xv, LoadQ8AsFloat(d, w + in + i), a1);
      a2 = hn::MulAdd(xv, LoadQ8AsFloat(d, w + 2 * in + i), a2);
      a3 = hn::MulAdd(xv, LoadQ8AsFloat(d, w + 3 * in + i), a3);
      a4 = hn::MulAdd(xv, LoadQ8AsFloat(d, w4 + i), a4), a5 = hn::MulAdd(xv, LoadQ8AsFloat(d, w4 + in + i), a5);
      a6 = hn::MulAdd(xv, LoadQ8AsFloat(d, w4 + 2 * in + i), a6);
      a7 = hn::MulAdd(xv, LoadQ8AsFloat(d, w4 + 3 * in + i), a7);
    }
    acc0 = hn::MulAdd(a0, hn::Set(d, s[g]), acc0), acc1 = hn::MulAdd(a1, hn::Set(d, s[groups + g]), acc1);
    acc2 = hn::MulAdd(a2, hn::Set(d, s[2 * groups + g]), acc2);
    acc3 = hn::MulAdd(a3, hn::Set(d, s[3 * groups + g]), acc3);
    acc4 = hn::MulAdd(a4, hn::Set(d, s[4 * groups + g]), acc4);
    acc5 = hn::MulAdd(a5, hn::Set(d, s[5 * groups + g]), acc5);
    acc6 = hn::MulAdd(a6, hn::Set(d, s[6 * groups + g]), acc6);
    acc7 = hn::MulAdd(a7, hn::Set(d, s[7 * groups + g]), acc7);
  }
  sums[0] = hn::GetLane(hn::SumOfLanes(d, acc0)), sums[1] = hn::GetLane(hn::SumOfLanes(d, acc1));
  sums[2] = hn::GetLane(hn::SumOfLanes(d, acc2)), sums[3] = hn::GetLane(hn::SumOfLanes(d, acc3));
  sums[4] = hn::GetLane(hn::SumOfLanes(d, acc4)), sums[5] = hn::GetLane(hn::SumOfLanes(d, acc5));
  sums[6] = hn::GetLane(hn::SumOfLanes(d, acc6)), sums[7] = hn::GetLane(hn::SumOfLanes(d, acc7));
}

// ACT_F32 for outputs o and o + 1 of one row, each output summed exactly as LinearQ8F32Block1x4 sums it (the same
// bits): two rows of W side by side, the next two requested into L1 as these are read (kStreamOneRow targets, where
// two rows so fetched stream almost as fast as one; docs/performance.md, "One stream").
template <class D>
HWY_INLINE void LinearQ8F32Block1x2(D d, const float* HWY_RESTRICT x, const internal::LinearQ8Problem& p, size_t o,
                                    float sums[2]) {
  const size_t N = hn::Lanes(d), in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  const int8_t* w0 = p.w.q + o * in;
  const int8_t* w1 = w0 + in;
  const float* s0 = p.w.scale + o * groups;
  const float* s1 = s0 + groups;
  const int8_t* next = o + 4 <= p.o_end ? w0 + 2 * in : nullptr;
  const float* next_scales = s0 + 2 * groups;  // with next: their 8 * groups bytes of scales, a line every 8 groups
  auto acc0 = hn::Zero(d), acc1 = acc0;
  for (size_t g = 0; g < groups; ++g) {
    auto a0 = hn::Zero(d), a1 = a0;
    if (next != nullptr) {
      PrefetchBytes(Ahead::kL1, next, 2 * g * gs, 2 * (g + 1) * gs);
      if (g % 8 == 0) PrefetchBytes(Ahead::kL1, next_scales, 8 * g, 8 * g + 1);
    }
    for (size_t i = g * gs; i < (g + 1) * gs; i += N) {
      const auto xv = hn::LoadU(d, x + i);
      a0 = hn::MulAdd(xv, LoadQ8AsFloat(d, w0 + i), a0), a1 = hn::MulAdd(xv, LoadQ8AsFloat(d, w1 + i), a1);
    }
    acc0 = hn::MulAdd(a0, hn::Set(d, s0[g]), acc0), acc1 = hn::MulAdd(a1, hn::Set(d, s1[g]), acc1);
  }
  sums[0] = hn::GetLane(hn::SumOfLanes(d, acc0)), sums[1] = hn::GetLane(hn::SumOfLanes(d, acc1));
}

// Four rows at a time (ACT_F32 with four rows or more) where 32 vector registers hold the 16 accumulators: x86
// AVX-512 (measured there; docs/performance.md, "ACT_F32 on four rows").
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool kQ8F32FourRows = true;
#else
constexpr bool kQ8F32FourRows = false;
#endif

// ACT_F32 for rows r .. r + 3 (x at row r) and outputs o, o + 1, each (row, output) summed exactly as
// LinearQ8F32Block1x4 sums it (the same bits): each converted vector of W feeds four rows' products, where a row at
// a time converts every vector of W once per row.
template <class D>
HWY_INLINE void LinearQ8F32Block4x2(D d, const float* HWY_RESTRICT x, const internal::LinearQ8Problem& p, size_t o,
                                    float sums[4][2]) {
  const size_t N = hn::Lanes(d), in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  const int8_t* w0 = p.w.q + o * in;
  const int8_t* w1 = w0 + in;
  const float* s0 = p.w.scale + o * groups;
  const float* s1 = s0 + groups;
  auto c00 = hn::Zero(d), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  for (size_t g = 0; g < groups; ++g) {
    auto a00 = hn::Zero(d), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
    for (size_t i = g * gs; i < (g + 1) * gs; i += N) {
      const auto v0 = LoadQ8AsFloat(d, w0 + i), v1 = LoadQ8AsFloat(d, w1 + i);
      const auto x0 = hn::LoadU(d, x + i), x1 = hn::LoadU(d, x + in + i);
      const auto x2 = hn::LoadU(d, x + 2 * in + i), x3 = hn::LoadU(d, x + 3 * in + i);
      a00 = hn::MulAdd(x0, v0, a00), a01 = hn::MulAdd(x0, v1, a01), a10 = hn::MulAdd(x1, v0, a10);
      a11 = hn::MulAdd(x1, v1, a11), a20 = hn::MulAdd(x2, v0, a20), a21 = hn::MulAdd(x2, v1, a21);
      a30 = hn::MulAdd(x3, v0, a30), a31 = hn::MulAdd(x3, v1, a31);
    }
    const auto sc0 = hn::Set(d, s0[g]), sc1 = hn::Set(d, s1[g]);
    c00 = hn::MulAdd(a00, sc0, c00), c01 = hn::MulAdd(a01, sc1, c01), c10 = hn::MulAdd(a10, sc0, c10);
    c11 = hn::MulAdd(a11, sc1, c11), c20 = hn::MulAdd(a20, sc0, c20), c21 = hn::MulAdd(a21, sc1, c21);
    c30 = hn::MulAdd(a30, sc0, c30), c31 = hn::MulAdd(a31, sc1, c31);
  }
  sums[0][0] = hn::GetLane(hn::SumOfLanes(d, c00)), sums[0][1] = hn::GetLane(hn::SumOfLanes(d, c01));
  sums[1][0] = hn::GetLane(hn::SumOfLanes(d, c10)), sums[1][1] = hn::GetLane(hn::SumOfLanes(d, c11));
  sums[2][0] = hn::GetLane(hn::SumOfLanes(d, c20)), sums[2][1] = hn::GetLane(hn::SumOfLanes(d, c21));
  sums[3][0] = hn::GetLane(hn::SumOfLanes(d, c30)), sums[3][1] = hn::GetLane(hn::SumOfLanes(d, c31));
}

// Rows r .. r + 3 through LinearQ8F32Block4x2, the last output of an odd count as LinearQ8F32Block1x4 does it.
template <class D>
HWY_INLINE void LinearQ8F32FourRows(D d, const internal::LinearQ8Problem& p, size_t r) {
  const size_t in = p.w.in_features, out = p.w.out_features;
  size_t o = p.o_begin;
  for (; o + 2 <= p.o_end; o += 2) {
    float sums[4][2];
    LinearQ8F32Block4x2(d, p.x + r * in, p, o, sums);
    for (size_t t = 0; t < 4; ++t) {
      for (size_t k = 0; k < 2; ++k) {
        p.y[(r + t) * out + o + k] = p.bias != nullptr ? sums[t][k] + p.bias[o + k] : sums[t][k];
      }
    }
  }
  if (o < p.o_end) {
    for (size_t t = 0; t < 4; ++t) {
      float sums[4];
      LinearQ8F32Block1x4(d, p.x + (r + t) * in, p, o, 1, sums);
      p.y[(r + t) * out + o] = p.bias != nullptr ? sums[0] + p.bias[o] : sums[0];
    }
  }
}

inline void LinearQ8F32Rows(const internal::LinearQ8Problem& p) {
  const hn::ScalableTag<float> d;
  if (p.w.group_size % hn::Lanes(d) != 0) {
    internal::LinearQ8F32Scalar(p);
    return;
  }
  const size_t in = p.w.in_features, out = p.w.out_features;
  size_t r = 0;
  if (kQ8F32FourRows) {
    for (; r + 4 <= p.rows; r += 4) LinearQ8F32FourRows(d, p, r);
  }
  for (; r < p.rows; ++r) {
    size_t o = p.o_begin;
    if (kStreamOneRow && p.rows <= 3 && in >= 512) {
      for (; o + 2 <= p.o_end; o += 2) {
        float sums[2];
        LinearQ8F32Block1x2(d, p.x + r * in, p, o, sums);
        for (size_t k = 0; k < 2; ++k) p.y[r * out + o + k] = p.bias != nullptr ? sums[k] + p.bias[o + k] : sums[k];
      }
    }
    for (; in >= 512 && o + 8 <= p.o_end; o += 8) {  // rows under 512 bytes: four rows were faster
      float sums[8];
      LinearQ8F32Block1x8(d, p.x + r * in, p, o, sums);
      for (size_t k = 0; k < 8; ++k) p.y[r * out + o + k] = p.bias != nullptr ? sums[k] + p.bias[o + k] : sums[k];
    }
    for (; o < p.o_end; o += 4) {
      const size_t count = p.o_end - o < 4 ? p.o_end - o : 4;
      float sums[4];
      LinearQ8F32Block1x4(d, p.x + r * in, p, o, count, sums);
      for (size_t k = 0; k < count; ++k) p.y[r * out + o + k] = p.bias != nullptr ? sums[k] + p.bias[o + k] : sums[k];
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

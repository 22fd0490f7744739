// SPDX-License-Identifier: Apache-2.0
// Linear projection on Highway vectors: output columns in registers, one broadcast x[i] per step.

#if defined(EDGEATTN_LIB_LINEAR_LINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_LINEAR_LINEAR_INL_H_
#undef EDGEATTN_LIB_LINEAR_LINEAR_INL_H_
#else
#define EDGEATTN_LIB_LINEAR_LINEAR_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/common/lane_sums-inl.h"
#include "lib/common/prefetch-inl.h"
#include "lib/common/simd_tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Columns [o, out) of one row: four output vectors per pass (four FMA chains), then one, then the tail.
template <class D>
HWY_INLINE void LinearRowColumns(D d, const float* HWY_RESTRICT x_row, size_t in, const float* HWY_RESTRICT w,
                                 const float* HWY_RESTRICT bias, size_t out, size_t o, float* HWY_RESTRICT y_row) {
  const size_t N = hn::Lanes(d);
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

// The strip of W that LinearRows multiplies into every block of four rows of x: up to kLinearPackFloats floats
// (chunk inputs by four vectors) copied to a contiguous buffer on the stack, 8 KiB, which stays in L1 while
// every block passes over it. Read in place, the strip's rows are `out` floats apart (2 KiB at out = 512): they
// share a few L1 sets, and the strip streamed from L2 for every block (0.66-0.75x of Eigen and OpenBLAS at
// 64 x 512 x 512, 1.9x slower than packed; docs/performance.md, step 10). SCALAR and EMU128 (the
// microcontroller targets, whose stack budget tests/stack_usage checks) read W in place, in chunks of 128.
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr size_t kLinearPackFloats = 0;
#else
constexpr size_t kLinearPackFloats = 2048;
#endif

// y = x W + bias for rows of x; the same summation order as LinearScalar (bias first, then increasing i), so
// both paths share one error bound. Four rows by four output vectors per pass: sixteen FMA chains, and each
// vector of W loaded once serves four rows. The inputs go in chunks (the packed strip), the partial sums
// through y between chunks (a float store and load are exact, so the order of the sum is unchanged).
inline void LinearRows(const float* HWY_RESTRICT x, size_t rows, size_t in, const float* HWY_RESTRICT w,
                       const float* HWY_RESTRICT bias, size_t out, float* HWY_RESTRICT y) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t full = out / (4 * N) * (4 * N);
  const size_t block_rows = rows / 4 * 4;
  const bool packed = kLinearPackFloats != 0 && block_rows != 0;
  const size_t chunk = kLinearPackFloats != 0 ? kLinearPackFloats / (4 * N) : 128;
  HWY_ALIGN float pack[kLinearPackFloats != 0 ? kLinearPackFloats : 1];
  for (size_t o = 0; o < full; o += 4 * N) {
    for (size_t i0 = 0; i0 == 0 || i0 < in; i0 += chunk) {
      const size_t i1 = in - i0 < chunk ? in : i0 + chunk;
      if (packed) {
        for (size_t i = i0; i < i1; ++i) {
          const float* w_row = w + i * out + o;
          float* dst = pack + (i - i0) * 4 * N;
          hn::Store(hn::LoadU(d, w_row), d, dst), hn::Store(hn::LoadU(d, w_row + N), d, dst + N);
          hn::Store(hn::LoadU(d, w_row + 2 * N), d, dst + 2 * N);
          hn::Store(hn::LoadU(d, w_row + 3 * N), d, dst + 3 * N);
        }
      }
      // Row i of the strip: 4 N floats at strip + (i - i0) * stride.
      const float* strip = packed ? pack : w + i0 * out + o;
      const size_t stride = packed ? 4 * N : out;
      for (size_t r = 0; r < block_rows; r += 4) {
        const float* x0 = x + r * in;
        const float* x1 = x0 + in;
        const float* x2 = x1 + in;
        const float* x3 = x2 + in;
        float* o0 = y + r * out + o;
        float* o1 = o0 + out;
        float* o2 = o1 + out;
        float* o3 = o2 + out;
        auto a00 = hn::Zero(d), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        auto a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        if (i0 != 0) {
          a00 = hn::LoadU(d, o0), a01 = hn::LoadU(d, o0 + N), a02 = hn::LoadU(d, o0 + 2 * N);
          a03 = hn::LoadU(d, o0 + 3 * N);
          a10 = hn::LoadU(d, o1), a11 = hn::LoadU(d, o1 + N), a12 = hn::LoadU(d, o1 + 2 * N);
          a13 = hn::LoadU(d, o1 + 3 * N);
          a20 = hn::LoadU(d, o2), a21 = hn::LoadU(d, o2 + N), a22 = hn::LoadU(d, o2 + 2 * N);
          a23 = hn::LoadU(d, o2 + 3 * N);
          a30 = hn::LoadU(d, o3), a31 = hn::LoadU(d, o3 + N), a32 = hn::LoadU(d, o3 + 2 * N);
          a33 = hn::LoadU(d, o3 + 3 * N);
        } else if (bias != nullptr) {
          a00 = a10 = a20 = a30 = hn::LoadU(d, bias + o);
          a01 = a11 = a21 = a31 = hn::LoadU(d, bias + o + N);
          a02 = a12 = a22 = a32 = hn::LoadU(d, bias + o + 2 * N);
          a03 = a13 = a23 = a33 = hn::LoadU(d, bias + o + 3 * N);
        }
        for (size_t i = i0; i < i1; ++i) {
          const float* w_row = strip + (i - i0) * stride;
          const auto w0 = hn::LoadU(d, w_row), w1 = hn::LoadU(d, w_row + N), w2 = hn::LoadU(d, w_row + 2 * N),
                     w3 = hn::LoadU(d, w_row + 3 * N);
          const auto v0 = hn::Set(d, x0[i]), v1 = hn::Set(d, x1[i]), v2 = hn::Set(d, x2[i]), v3 = hn::Set(d, x3[i]);
          a00 = hn::MulAdd(v0, w0, a00), a01 = hn::MulAdd(v0, w1, a01), a02 = hn::MulAdd(v0, w2, a02);
          a03 = hn::MulAdd(v0, w3, a03);
          a10 = hn::MulAdd(v1, w0, a10), a11 = hn::MulAdd(v1, w1, a11), a12 = hn::MulAdd(v1, w2, a12);
          a13 = hn::MulAdd(v1, w3, a13);
          a20 = hn::MulAdd(v2, w0, a20), a21 = hn::MulAdd(v2, w1, a21), a22 = hn::MulAdd(v2, w2, a22);
          a23 = hn::MulAdd(v2, w3, a23);
          a30 = hn::MulAdd(v3, w0, a30), a31 = hn::MulAdd(v3, w1, a31), a32 = hn::MulAdd(v3, w2, a32);
          a33 = hn::MulAdd(v3, w3, a33);
        }
        hn::StoreU(a00, d, o0), hn::StoreU(a01, d, o0 + N), hn::StoreU(a02, d, o0 + 2 * N);
        hn::StoreU(a03, d, o0 + 3 * N);
        hn::StoreU(a10, d, o1), hn::StoreU(a11, d, o1 + N), hn::StoreU(a12, d, o1 + 2 * N);
        hn::StoreU(a13, d, o1 + 3 * N);
        hn::StoreU(a20, d, o2), hn::StoreU(a21, d, o2 + N), hn::StoreU(a22, d, o2 + 2 * N);
        hn::StoreU(a23, d, o2 + 3 * N);
        hn::StoreU(a30, d, o3), hn::StoreU(a31, d, o3 + N), hn::StoreU(a32, d, o3 + 2 * N);
        hn::StoreU(a33, d, o3 + 3 * N);
      }
    }
  }
  if (full < out) {
    for (size_t r = 0; r < block_rows; ++r) LinearRowColumns(d, x + r * in, in, w, bias, out, full, y + r * out);
  }
  for (size_t r = block_rows; r < rows; ++r) LinearRowColumns(d, x + r * in, in, w, bias, out, 0, y + r * out);
}

// ---- linear_transposed: W stored [out][in], so each output is a dot product of a row of x with a row of W,
// both contiguous. Four rows of x by four rows of W per pass: sixteen FMA chains, eight loads per sixteen FMAs,
// each vector of x reused by four outputs and each vector of W by four rows. The lanes are summed once per
// output, after the whole row, and the bias is added last; the error bound of `linear` holds for any order.

// Four rows of W (w0..w3, the same row repeated where fewer than four outputs are left) against four rows of x.
template <class D>
HWY_INLINE void LinearTransposedBlock4x4(D d, const float* HWY_RESTRICT x, size_t in, const float* w0, const float* w1,
                                         const float* w2, const float* w3, float sums[4][4]) {
  const size_t N = hn::Lanes(d);
  const float* x0 = x;
  const float* x1 = x0 + in;
  const float* x2 = x1 + in;
  const float* x3 = x2 + in;
  auto a00 = hn::Zero(d), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
  auto a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
  size_t i = 0;
  for (; i + N <= in; i += N) {
    const auto v0 = hn::LoadU(d, w0 + i), v1 = hn::LoadU(d, w1 + i), v2 = hn::LoadU(d, w2 + i),
               v3 = hn::LoadU(d, w3 + i);
    auto u = hn::LoadU(d, x0 + i);
    a00 = hn::MulAdd(u, v0, a00), a01 = hn::MulAdd(u, v1, a01), a02 = hn::MulAdd(u, v2, a02);
    a03 = hn::MulAdd(u, v3, a03);
    u = hn::LoadU(d, x1 + i);
    a10 = hn::MulAdd(u, v0, a10), a11 = hn::MulAdd(u, v1, a11), a12 = hn::MulAdd(u, v2, a12);
    a13 = hn::MulAdd(u, v3, a13);
    u = hn::LoadU(d, x2 + i);
    a20 = hn::MulAdd(u, v0, a20), a21 = hn::MulAdd(u, v1, a21), a22 = hn::MulAdd(u, v2, a22);
    a23 = hn::MulAdd(u, v3, a23);
    u = hn::LoadU(d, x3 + i);
    a30 = hn::MulAdd(u, v0, a30), a31 = hn::MulAdd(u, v1, a31), a32 = hn::MulAdd(u, v2, a32);
    a33 = hn::MulAdd(u, v3, a33);
  }
  if (i < in) {  // zero-padded tail: the padding adds 0 * 0
    const size_t rest = in - i;
    const auto v0 = LoadTail(d, w0 + i, rest), v1 = LoadTail(d, w1 + i, rest), v2 = LoadTail(d, w2 + i, rest),
               v3 = LoadTail(d, w3 + i, rest);
    auto u = LoadTail(d, x0 + i, rest);
    a00 = hn::MulAdd(u, v0, a00), a01 = hn::MulAdd(u, v1, a01), a02 = hn::MulAdd(u, v2, a02);
    a03 = hn::MulAdd(u, v3, a03);
    u = LoadTail(d, x1 + i, rest);
    a10 = hn::MulAdd(u, v0, a10), a11 = hn::MulAdd(u, v1, a11), a12 = hn::MulAdd(u, v2, a12);
    a13 = hn::MulAdd(u, v3, a13);
    u = LoadTail(d, x2 + i, rest);
    a20 = hn::MulAdd(u, v0, a20), a21 = hn::MulAdd(u, v1, a21), a22 = hn::MulAdd(u, v2, a22);
    a23 = hn::MulAdd(u, v3, a23);
    u = LoadTail(d, x3 + i, rest);
    a30 = hn::MulAdd(u, v0, a30), a31 = hn::MulAdd(u, v1, a31), a32 = hn::MulAdd(u, v2, a32);
    a33 = hn::MulAdd(u, v3, a33);
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const hn::Full128<float> d4;
  hn::StoreU(LaneSums4(a00, a01, a02, a03), d4, sums[0]), hn::StoreU(LaneSums4(a10, a11, a12, a13), d4, sums[1]);
  hn::StoreU(LaneSums4(a20, a21, a22, a23), d4, sums[2]), hn::StoreU(LaneSums4(a30, a31, a32, a33), d4, sums[3]);
  return;
#endif
  sums[0][0] = hn::GetLane(hn::SumOfLanes(d, a00)), sums[0][1] = hn::GetLane(hn::SumOfLanes(d, a01));
  sums[0][2] = hn::GetLane(hn::SumOfLanes(d, a02)), sums[0][3] = hn::GetLane(hn::SumOfLanes(d, a03));
  sums[1][0] = hn::GetLane(hn::SumOfLanes(d, a10)), sums[1][1] = hn::GetLane(hn::SumOfLanes(d, a11));
  sums[1][2] = hn::GetLane(hn::SumOfLanes(d, a12)), sums[1][3] = hn::GetLane(hn::SumOfLanes(d, a13));
  sums[2][0] = hn::GetLane(hn::SumOfLanes(d, a20)), sums[2][1] = hn::GetLane(hn::SumOfLanes(d, a21));
  sums[2][2] = hn::GetLane(hn::SumOfLanes(d, a22)), sums[2][3] = hn::GetLane(hn::SumOfLanes(d, a23));
  sums[3][0] = hn::GetLane(hn::SumOfLanes(d, a30)), sums[3][1] = hn::GetLane(hn::SumOfLanes(d, a31));
  sums[3][2] = hn::GetLane(hn::SumOfLanes(d, a32)), sums[3][3] = hn::GetLane(hn::SumOfLanes(d, a33));
}

// One row of x against four rows of W (decode: rows = 1), two accumulators per output so that eight FMA chains
// hide the FMA latency.
template <class D>
HWY_INLINE void LinearTransposedBlock1x4(D d, const float* HWY_RESTRICT x, size_t in, const float* w0, const float* w1,
                                         const float* w2, const float* w3, float sums[4]) {
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  size_t i = 0;
  for (; i + 2 * N <= in; i += 2 * N) {
    auto u = hn::LoadU(d, x + i);
    a0 = hn::MulAdd(u, hn::LoadU(d, w0 + i), a0), a1 = hn::MulAdd(u, hn::LoadU(d, w1 + i), a1);
    a2 = hn::MulAdd(u, hn::LoadU(d, w2 + i), a2), a3 = hn::MulAdd(u, hn::LoadU(d, w3 + i), a3);
    u = hn::LoadU(d, x + i + N);
    b0 = hn::MulAdd(u, hn::LoadU(d, w0 + i + N), b0), b1 = hn::MulAdd(u, hn::LoadU(d, w1 + i + N), b1);
    b2 = hn::MulAdd(u, hn::LoadU(d, w2 + i + N), b2), b3 = hn::MulAdd(u, hn::LoadU(d, w3 + i + N), b3);
  }
  for (; i < in; i += N) {
    const size_t rest = in - i < N ? in - i : N;
    const auto u = LoadTail(d, x + i, rest);
    a0 = hn::MulAdd(u, LoadTail(d, w0 + i, rest), a0), a1 = hn::MulAdd(u, LoadTail(d, w1 + i, rest), a1);
    a2 = hn::MulAdd(u, LoadTail(d, w2 + i, rest), a2), a3 = hn::MulAdd(u, LoadTail(d, w3 + i, rest), a3);
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  hn::StoreU(LaneSums4(hn::Add(a0, b0), hn::Add(a1, b1), hn::Add(a2, b2), hn::Add(a3, b3)), hn::Full128<float>(), sums);
  return;
#endif
  sums[0] = hn::GetLane(hn::SumOfLanes(d, hn::Add(a0, b0)));
  sums[1] = hn::GetLane(hn::SumOfLanes(d, hn::Add(a1, b1)));
  sums[2] = hn::GetLane(hn::SumOfLanes(d, hn::Add(a2, b2)));
  sums[3] = hn::GetLane(hn::SumOfLanes(d, hn::Add(a3, b3)));
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// One row of x against eight rows of W (contiguous: w + k * in), for rows of fewer than 128 inputs on AVX-512:
// each output's two chains and their sum exactly as Block1x4's, then the eight lane sums at once (LaneSums8, the
// bits of SumOfLanes), so the same bits as Block1x4 in a third of the operations after the FMAs. At 64 inputs an
// output is four FMAs, and the sums one by one (about eight operations each, then a store and a reload of the
// four sums) had cost more than the products.
template <class D>
HWY_INLINE hn::Vec256<float> LinearTransposedSums1x8(D d, const float* HWY_RESTRICT x, size_t in, const float* w) {
  const size_t N = hn::Lanes(d);
  const float* w1 = w + in;
  const float* w2 = w1 + in;
  const float* w3 = w2 + in;
  const float* w4 = w3 + in;
  const float* w5 = w4 + in;
  const float* w6 = w5 + in;
  const float* w7 = w6 + in;
  auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  auto b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
  size_t i = 0;
  for (; i + 2 * N <= in; i += 2 * N) {
    const auto u = hn::LoadU(d, x + i), v = hn::LoadU(d, x + i + N);
    a0 = hn::MulAdd(u, hn::LoadU(d, w + i), a0), b0 = hn::MulAdd(v, hn::LoadU(d, w + i + N), b0);
    a1 = hn::MulAdd(u, hn::LoadU(d, w1 + i), a1), b1 = hn::MulAdd(v, hn::LoadU(d, w1 + i + N), b1);
    a2 = hn::MulAdd(u, hn::LoadU(d, w2 + i), a2), b2 = hn::MulAdd(v, hn::LoadU(d, w2 + i + N), b2);
    a3 = hn::MulAdd(u, hn::LoadU(d, w3 + i), a3), b3 = hn::MulAdd(v, hn::LoadU(d, w3 + i + N), b3);
    a4 = hn::MulAdd(u, hn::LoadU(d, w4 + i), a4), b4 = hn::MulAdd(v, hn::LoadU(d, w4 + i + N), b4);
    a5 = hn::MulAdd(u, hn::LoadU(d, w5 + i), a5), b5 = hn::MulAdd(v, hn::LoadU(d, w5 + i + N), b5);
    a6 = hn::MulAdd(u, hn::LoadU(d, w6 + i), a6), b6 = hn::MulAdd(v, hn::LoadU(d, w6 + i + N), b6);
    a7 = hn::MulAdd(u, hn::LoadU(d, w7 + i), a7), b7 = hn::MulAdd(v, hn::LoadU(d, w7 + i + N), b7);
  }
  for (; i < in; i += N) {
    const size_t rest = in - i < N ? in - i : N;
    const auto u = LoadTail(d, x + i, rest);
    a0 = hn::MulAdd(u, LoadTail(d, w + i, rest), a0), a1 = hn::MulAdd(u, LoadTail(d, w1 + i, rest), a1);
    a2 = hn::MulAdd(u, LoadTail(d, w2 + i, rest), a2), a3 = hn::MulAdd(u, LoadTail(d, w3 + i, rest), a3);
    a4 = hn::MulAdd(u, LoadTail(d, w4 + i, rest), a4), a5 = hn::MulAdd(u, LoadTail(d, w5 + i, rest), a5);
    a6 = hn::MulAdd(u, LoadTail(d, w6 + i, rest), a6), a7 = hn::MulAdd(u, LoadTail(d, w7 + i, rest), a7);
  }
  const hn::Vec512<float> sums[8] = {hn::Add(a0, b0), hn::Add(a1, b1), hn::Add(a2, b2), hn::Add(a3, b3),
                                     hn::Add(a4, b4), hn::Add(a5, b5), hn::Add(a6, b6), hn::Add(a7, b7)};
  return LaneSums8(sums);
}
#endif

// One row of x against eight rows of W (decode: rows < 4), one FMA chain per output; eight chains hide the FMA
// latency. Why eight rows and not four: a decode step reads each weight once, from DRAM in a model, and the
// x86 core of CPU family 25 streamed eight rows side by side far better than four (8-12 GB/s with four rows of 768
// floats, 17-23 with eight; docs/performance.md, "Streaming the weights"). x86 SIMD targets now take the one-row
// kernel below instead (family 26 streams one row at a time faster still); Arm's keep this one. The rows are
// contiguous: w + k * in.
// `next`: the next eight rows (8 * in floats), fetched ahead (lib/common/prefetch-inl.h), or null.
template <class D>
HWY_INLINE void LinearTransposedBlock1x8(D d, const float* HWY_RESTRICT x, size_t in, const float* w, Ahead ahead,
                                         const float* next, float sums[8]) {
  const size_t N = hn::Lanes(d);
  const float* w4 = w + 4 * in;
  auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  size_t i = 0;
  for (; i + N <= in; i += N) {
    if (next != nullptr) PrefetchBytes(ahead, next, 32 * i, 32 * (i + N));  // what this step reads of these rows
    const auto u = hn::LoadU(d, x + i);
    a0 = hn::MulAdd(u, hn::LoadU(d, w + i), a0), a1 = hn::MulAdd(u, hn::LoadU(d, w + in + i), a1);
    a2 = hn::MulAdd(u, hn::LoadU(d, w + 2 * in + i), a2), a3 = hn::MulAdd(u, hn::LoadU(d, w + 3 * in + i), a3);
    a4 = hn::MulAdd(u, hn::LoadU(d, w4 + i), a4), a5 = hn::MulAdd(u, hn::LoadU(d, w4 + in + i), a5);
    a6 = hn::MulAdd(u, hn::LoadU(d, w4 + 2 * in + i), a6), a7 = hn::MulAdd(u, hn::LoadU(d, w4 + 3 * in + i), a7);
  }
  if (i < in) {
    const size_t rest = in - i;
    const auto u = LoadTail(d, x + i, rest);
    a0 = hn::MulAdd(u, LoadTail(d, w + i, rest), a0), a1 = hn::MulAdd(u, LoadTail(d, w + in + i, rest), a1);
    a2 = hn::MulAdd(u, LoadTail(d, w + 2 * in + i, rest), a2);
    a3 = hn::MulAdd(u, LoadTail(d, w + 3 * in + i, rest), a3);
    a4 = hn::MulAdd(u, LoadTail(d, w4 + i, rest), a4), a5 = hn::MulAdd(u, LoadTail(d, w4 + in + i, rest), a5);
    a6 = hn::MulAdd(u, LoadTail(d, w4 + 2 * in + i, rest), a6);
    a7 = hn::MulAdd(u, LoadTail(d, w4 + 3 * in + i, rest), a7);
  }
  sums[0] = hn::GetLane(hn::SumOfLanes(d, a0)), sums[1] = hn::GetLane(hn::SumOfLanes(d, a1));
  sums[2] = hn::GetLane(hn::SumOfLanes(d, a2)), sums[3] = hn::GetLane(hn::SumOfLanes(d, a3));
  sums[4] = hn::GetLane(hn::SumOfLanes(d, a4)), sums[5] = hn::GetLane(hn::SumOfLanes(d, a5));
  sums[6] = hn::GetLane(hn::SumOfLanes(d, a6)), sums[7] = hn::GetLane(hn::SumOfLanes(d, a7));
}

// One row of x against one row of W: two FMA chains (even and odd vectors), summed as Block1x4 sums each of its
// outputs, so the same bits. Decode on x86 reads W one row after another, a single sequential stream
// (kStreamOneRow), the line 4 KB ahead requested as it goes (stream_ahead; the requests end at w_end, W's end).
// Two chains, not one: with one, a 4 MB matrix read from L3 ran 18% slower than eight rows side by side (the
// FMA latency of a row's chain; the core runs only about one further row ahead out of order).
template <class D>
HWY_INLINE float LinearTransposedDot1(D d, const float* HWY_RESTRICT x, size_t in, const float* w, bool stream_ahead,
                                      const float* w_end) {
  const size_t N = hn::Lanes(d);
  auto a = hn::Zero(d), b = a;
  size_t i = 0;
  for (; i + 2 * N <= in; i += 2 * N) {
    if (stream_ahead) {  // one request per 64-byte line where a step spans two (AVX-512), else one per step
      StreamAhead(w + i, w_end);
      if (N * sizeof(float) >= 64) StreamAhead(w + i + N, w_end);
    }
    a = hn::MulAdd(hn::LoadU(d, x + i), hn::LoadU(d, w + i), a);
    b = hn::MulAdd(hn::LoadU(d, x + i + N), hn::LoadU(d, w + i + N), b);
  }
  for (; i < in; i += N) {
    const size_t rest = in - i < N ? in - i : N;
    a = hn::MulAdd(LoadTail(d, x + i, rest), LoadTail(d, w + i, rest), a);
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(a, b)));
}

// y = x W^T + bias for outputs [o_begin, o_end) (all of them, or a part of the work split). Calls of fewer than four
// rows take outputs eight at a time first on AVX-512 when the rows have fewer than 128 inputs or the matrix is small
// (LinearTransposedSums1x8, the four-output kernel's bits). Otherwise, with rows of at least 128 inputs, they take W
// one row at a time on x86 SIMD targets (kStreamOneRow, the same bits again), elsewhere outputs eight at a time
// (Block1x8, chains of its own). Then outputs go four at a time, the last group repeating its last row of W (its sums
// discarded), so every group runs the same sixteen-chain kernel; rows go four at a time (requesting the next block of W
// ahead: FourRowAheadSlice), the rest one at a time. An output's sums depend only on its row of W, the row of x and
// which kernel ran it; parts begin and end at multiples of 16 outputs (or at the end), so the blocks of eight fall
// where the single call's do: a part writes its bits.
inline void LinearTransposedRows(const float* HWY_RESTRICT x, size_t rows, size_t in, const float* HWY_RESTRICT w,
                                 const float* HWY_RESTRICT bias, size_t out, size_t o_begin, size_t o_end,
                                 float* HWY_RESTRICT y) {
  const hn::ScalableTag<float> d;
  const size_t block_rows = rows / 4 * 4;
  size_t o = o_begin;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // Fewer than four rows, rows of fewer than 128 inputs or a matrix of at most kCachedMatrixBytes: eight outputs
  // at a time (the same bits as the kernels below), the next eight rows of W requested into L1 as they go.
  if (block_rows == 0 && (in < 128 || out * in * sizeof(float) <= kCachedMatrixBytes)) {
    const hn::Full256<float> d8;
    const size_t block_bytes = 8 * in * sizeof(float);
    for (; o + 8 <= o_end; o += 8) {
      if (o + 16 <= o_end) {
        const char* next = reinterpret_cast<const char*>(w + (o + 8) * in);
        for (size_t j = 0; j < block_bytes; j += 64) hwy::Prefetch(next + j);
      }
      for (size_t r = 0; r < rows; ++r) {
        const auto sums = LinearTransposedSums1x8(d, x + r * in, in, w + o * in);
        hn::StoreU(bias != nullptr ? hn::Add(hn::LoadU(d8, bias + o), sums) : sums, d8, y + r * out + o);
      }
    }
  }
#endif
  if (kStreamOneRow && block_rows == 0 && in >= 128) {
    const float* w_end = w + out * in;
    for (; o < o_end; ++o) {
      for (size_t r = 0; r < rows; ++r) {
        const float sum = LinearTransposedDot1(d, x + r * in, in, w + o * in, r == 0, w_end);
        y[r * out + o] = bias != nullptr ? bias[o] + sum : sum;
      }
    }
  } else if (block_rows == 0 && in >= 128) {  // rows under 512 bytes: the four-row kernel's two chains were faster
    const Ahead ahead = NextRowsAhead(4 * in, 8);
    for (; o + 8 <= o_end; o += 8) {
      float sums[8];
      const float* next = ahead != Ahead::kNone && o + 16 <= o_end ? w + (o + 8) * in : nullptr;
      for (size_t r = 0; r < rows; ++r) {
        LinearTransposedBlock1x8(d, x + r * in, in, w + o * in, ahead, r == 0 ? next : nullptr, sums);
        for (size_t j = 0; j < 8; ++j) y[r * out + o + j] = bias != nullptr ? bias[o + j] + sums[j] : sums[j];
      }
    }
  }
  const size_t ahead_slice = FourRowAheadSlice(out * in * sizeof(float), 4 * in * sizeof(float), block_rows);
  for (; o < o_end; o += 4) {
    const size_t count = o_end - o < 4 ? o_end - o : 4;
    const float* w0 = w + o * in;
    const float* w1 = w + (o + (count > 1 ? 1 : 0)) * in;
    const float* w2 = w + (o + (count > 2 ? 2 : 0)) * in;
    const float* w3 = w + (o + (count > 3 ? 3 : 0)) * in;
    const float* next = ahead_slice != 0 && o + 8 <= o_end ? w + (o + 4) * in : nullptr;
    float sums[4][4];
    for (size_t r = 0; r < block_rows; r += 4) {
      if (next != nullptr) PrefetchSlice(kAheadIntoL1, next, 4 * in * sizeof(float), r / 4, ahead_slice);
      LinearTransposedBlock4x4(d, x + r * in, in, w0, w1, w2, w3, sums);
      for (size_t k = 0; k < 4; ++k) {
        for (size_t j = 0; j < count; ++j) {
          y[(r + k) * out + o + j] = bias != nullptr ? bias[o + j] + sums[k][j] : sums[k][j];
        }
      }
    }
    for (size_t r = block_rows; r < rows; ++r) {
      LinearTransposedBlock1x4(d, x + r * in, in, w0, w1, w2, w3, sums[0]);
      for (size_t j = 0; j < count; ++j) y[r * out + o + j] = bias != nullptr ? bias[o + j] + sums[0][j] : sums[0][j];
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// SPDX-License-Identifier: Apache-2.0
// linear_q8 on Highway vectors.
//
// ACT_Q8 runs in blocks of 16 outputs x 4 rows x 16 groups, two named steps per block:
//  - sums: an int8 kernel (linear_q8_kernels.h: the instruction kernels, or Q8SumsPortable below) writes the
//    block's exact int32 group sums to the workspace, outputs in consecutive lanes;
//  - finish: lanes = outputs, so each output's float steps run in the contract's order, one rounding each:
//    acc = acc + ((float)s * scale) * sx per group (Mul, Mul, Add: never MulAdd), the bias added last. The
//    accumulators pass through y between group chunks (a float store and load are exact); the block's scales
//    are transposed once into the workspace for all its rows.
// The int sums are exact whatever the kernel, and the float steps are the scalar path's, so every target and
// kernel writes the scalar path's bits. ARMv7 NEON flushes subnormals and ignores the rounding mode: there the
// finish step runs on the VFP, one output at a time.
//
// ACT_F32 (linear_q8_f32-inl.h) needs no workspace: per output a float dot of x with the converted int8 row.

#if defined(EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_INL_H_
#undef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_INL_H_
#else
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/highway.h"
#include "lib/common/prefetch-inl.h"
#include "lib/common/q8_quantize-inl.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/linear_q8/linear_q8_dsp.h"
#include "lib/linear_q8/linear_q8_f32-inl.h"
#include "lib/linear_q8/linear_q8_kernels.h"
#include "lib/linear_q8/linear_q8_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// sum a[i] * b[i] over n int8 pairs: widened to int16, pairwise products summed into int32 lanes (vpmaddwd on
// x86, smlal on NEON), the lanes reduced once.
HWY_INLINE int32_t Q8DotPortable(const int8_t* HWY_RESTRICT a, const int8_t* HWY_RESTRICT b, size_t n) {
  const hn::ScalableTag<int16_t> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  const size_t N = hn::Lanes(d16);
  size_t i = 0;
  int32_t sum = 0;
  if (n >= N) {
    auto sum0 = hn::Zero(d32), sum1 = hn::Zero(d32);
    for (; i + N <= n; i += N) {
      const auto va = hn::PromoteTo(d16, hn::LoadU(d8, a + i));
      const auto vb = hn::PromoteTo(d16, hn::LoadU(d8, b + i));
      sum0 = hn::ReorderWidenMulAccumulate(d32, va, vb, sum0, sum1);
    }
    sum = hn::GetLane(hn::SumOfLanes(d32, hn::Add(sum0, sum1)));
  }
  for (; i < n; ++i) sum += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return sum;
}

// One-lane targets of a core with the DSP extension (Cortex-M4, M7, where Highway has no vector target): the block
// layout below buys nothing on one lane and costs a trip through memory per (output, group), so ACT_Q8 runs the
// scalar path's loop with SMLAD group sums, two outputs per pass (linear_q8_dsp.h). The sums are exact: the same
// bits.
#define EDGEATTN_LINEAR_Q8_DSP_LOOP (EDGEATTN_DSP && (HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128))

// The portable sums kernel: one group dot per (row, group, output).
HWY_INLINE void Q8SumsPortable(const internal::Q8SumsBlock& b) {
  if (b.pack) internal::Q8FillScaleTile(b);
  for (size_t r = 0; r < b.rows; ++r) {
    for (size_t j = 0; j < b.groups; ++j) {
      int32_t* s = b.s + (r * internal::kQ8BlockGroups + j) * internal::kQ8BlockOutputs;
      const int8_t* x = b.x + r * b.x_stride + j * b.group_size;
      for (size_t k = 0; k < b.outputs; ++k)
        s[k] = Q8DotPortable(x, b.w + k * b.w_stride + j * b.group_size, b.group_size);
    }
  }
}

HWY_INLINE void RunQ8Sums(internal::Q8Kernel kernel, const internal::Q8SumsBlock& b) {
  switch (kernel) {
    case internal::Q8Kernel::kAvx512Vnni:
      internal::Q8SumsAvx512Vnni(b);
      return;
    case internal::Q8Kernel::kAvxVnni:
      internal::Q8SumsAvxVnni(b);
      return;
    case internal::Q8Kernel::kDotprod:
      internal::Q8SumsDotprod(b);
      return;
    case internal::Q8Kernel::kPortable:
      break;
  }
  Q8SumsPortable(b);
}

// Where one block's finish step reads and writes: outputs [o, o + count) of rows [r0, r0 + rows), groups
// [g0, g0 + groups) of the sums block.
struct Q8FinishArgs {
  size_t o, count, r0, rows, g0, groups;
};

#if HWY_ARCH_ARM_V7
// The VFP's finish: the scalar path's statements, in its order.
HWY_INLINE void Q8Finish(const internal::LinearQ8Problem& p, const internal::Q8Workspace& ws, const Q8FinishArgs& a) {
  const size_t all_groups = p.w.in_features / p.w.group_size, out = p.w.out_features;
  for (size_t r = 0; r < a.rows; ++r) {
    for (size_t k = 0; k < a.count; ++k) {
      float* y = p.y + (a.r0 + r) * out + a.o + k;
      float acc = a.g0 == 0 ? 0.0f : *y;
      for (size_t j = 0; j < a.groups; ++j) {
        const int32_t s = ws.sums[(r * internal::kQ8BlockGroups + j) * internal::kQ8BlockOutputs + k];
        acc = acc + (static_cast<float>(s) * ws.scale_tile[j * internal::kQ8BlockOutputs + k]) *
                        ws.sx[(a.r0 + r) * all_groups + a.g0 + j];
      }
      if (a.g0 + a.groups == all_groups && p.bias != nullptr) acc = acc + p.bias[a.o + k];
      *y = acc;
    }
  }
}
#else
// acc + ((float)s * scale) * sx for one row and group, lanes = outputs.
template <class D>
HWY_INLINE hn::Vec<D> Q8FinishStep(D d, hn::Vec<D> acc, const int32_t* HWY_RESTRICT sums, hn::Vec<D> scale, float sx) {
  const hn::RebindToSigned<D> di;
  return hn::Add(acc, hn::Mul(hn::Mul(hn::ConvertTo(d, hn::LoadU(di, sums)), scale), hn::Set(d, sx)));
}

HWY_INLINE void Q8Finish(const internal::LinearQ8Problem& p, const internal::Q8Workspace& ws, const Q8FinishArgs& a) {
  const hn::CappedTag<float, internal::kQ8BlockOutputs> d;
  const size_t N = hn::Lanes(d), all_groups = p.w.in_features / p.w.group_size, out = p.w.out_features;
  const size_t row_sums = internal::kQ8BlockGroups * internal::kQ8BlockOutputs;
  const bool last = a.g0 + a.groups == all_groups;
  for (size_t k = 0; k < a.count; k += N) {
    const size_t lanes = a.count - k < N ? a.count - k : N;
    // Up to four rows' accumulators in registers, each group's scales loaded once for all of them.
    float* y0 = p.y + a.r0 * out + a.o + k;
    auto acc0 = a.g0 == 0 ? hn::Zero(d) : LoadTail(d, y0, lanes), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    if (a.g0 != 0 && a.rows > 1) acc1 = LoadTail(d, y0 + out, lanes);
    if (a.g0 != 0 && a.rows > 2) acc2 = LoadTail(d, y0 + 2 * out, lanes);
    if (a.g0 != 0 && a.rows > 3) acc3 = LoadTail(d, y0 + 3 * out, lanes);
    const float* sx = ws.sx + a.r0 * all_groups + a.g0;
    for (size_t j = 0; j < a.groups; ++j) {
      const auto scale = hn::LoadU(d, ws.scale_tile + j * internal::kQ8BlockOutputs + k);
      const int32_t* sums = ws.sums + j * internal::kQ8BlockOutputs + k;
      acc0 = Q8FinishStep(d, acc0, sums, scale, sx[j]);
      if (a.rows > 1) acc1 = Q8FinishStep(d, acc1, sums + row_sums, scale, sx[all_groups + j]);
      if (a.rows > 2) acc2 = Q8FinishStep(d, acc2, sums + 2 * row_sums, scale, sx[2 * all_groups + j]);
      if (a.rows > 3) acc3 = Q8FinishStep(d, acc3, sums + 3 * row_sums, scale, sx[3 * all_groups + j]);
    }
    const auto bias = last && p.bias != nullptr ? LoadTail(d, p.bias + a.o + k, lanes) : hn::Zero(d);
    const bool add_bias = last && p.bias != nullptr;
    StoreTail(d, add_bias ? hn::Add(acc0, bias) : acc0, y0, lanes);
    if (a.rows > 1) StoreTail(d, add_bias ? hn::Add(acc1, bias) : acc1, y0 + out, lanes);
    if (a.rows > 2) StoreTail(d, add_bias ? hn::Add(acc2, bias) : acc2, y0 + 2 * out, lanes);
    if (a.rows > 3) StoreTail(d, add_bias ? hn::Add(acc3, bias) : acc3, y0 + 3 * out, lanes);
  }
}
#endif

// ACT_Q8: quantise every row of x, then the blocks: per block of outputs and groups the scales and the weights
// (in the kernel's layout) once, per block of rows the sums and the finish.
inline void LinearQ8Rows(const internal::LinearQ8Problem& p) {
#if EDGEATTN_LINEAR_Q8_DSP_LOOP
  dsp::LinearQ8Dsp(p);
#else
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs;
  const internal::Q8Workspace ws = internal::CarveQ8Workspace(p.workspace, p.rows, groups, gs);
  if (p.kernel == internal::Q8Kernel::kAvx512Vnni && (gs == 32 || gs == 64)) {
    // Rows are contiguous and so are their groups: one run of rows * groups groups, sixteen at a time.
    internal::Q8QuantizeGroupsAvx512(p.x, p.rows * groups, gs, ws.qx, ws.sx, ws.x_offset);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  } else if (gs == 4) {  // the same run, a vector's worth of groups at a time
    Q8QuantizeGroupsOf4(p.x, p.rows * groups, ws.qx, ws.sx, ws.x_offset);
#endif
  } else {
    for (size_t r = 0; r < p.rows; ++r) {
      for (size_t g = 0; g < groups; ++g) {
        const size_t i = r * in + g * gs;
        int32_t sum;
        ws.sx[r * groups + g] = Q8QuantizeGroupSimd(p.x + i, gs, ws.qx + i, &sum);
        ws.x_offset[r * groups + g] = -128 * sum;
      }
    }
  }
  if (p.rows == 1 && p.kernel == internal::Q8Kernel::kAvx512Vnni && internal::Q8StreamLayout(gs)) {
    // One row as one stream: x's row, scales and offsets with their wraps (Q8StreamRow).
    for (size_t i = in; i < in + internal::kQ8StreamWrapBytes;) {  // whole copies of the row, then a head
      const size_t n = in + internal::kQ8StreamWrapBytes - i < in ? in + internal::kQ8StreamWrapBytes - i : in;
      memcpy(ws.qx + i, ws.qx, n);
      i += n;
    }
    for (size_t g = groups; g < groups + internal::kQ8StreamWrapGroups; ++g) {
      ws.sx[g] = ws.sx[g - groups], ws.x_offset[g] = ws.x_offset[g - groups];
    }
    const internal::Q8StreamRow row{p.w.q + p.o_begin * in,
                                    p.w.scale + p.o_begin * groups,
                                    p.o_end - p.o_begin,
                                    in,
                                    gs,
                                    groups,
                                    ws.qx,
                                    ws.sx,
                                    ws.x_offset,
                                    ws.products,
                                    p.y + p.o_begin,
                                    p.bias != nullptr ? p.bias + p.o_begin : nullptr};
    internal::Q8StreamRowAvx512Vnni(row);
    return;
  }
  const bool wide = internal::Q8WideBlocks(p.kernel, p.rows, gs);
  const size_t kOut = internal::kQ8BlockOutputs, block_outputs = wide ? internal::kQ8WideBlockOutputs : kOut;
  const size_t block_groups = wide ? internal::Q8WideBlockGroups(gs) : internal::Q8BlockGroups(gs);
  for (size_t o = p.o_begin; o < p.o_end; o += block_outputs) {
    const size_t count = p.o_end - o < block_outputs ? p.o_end - o : block_outputs;
    // One row: the next block's 16 rows of W, requested in step with this block's (lib/common/prefetch-inl.h).
    const Ahead ahead = p.rows == 1 && o + 2 * kOut <= p.o_end ? NextRowsAhead(in, kOut) : Ahead::kNone;
    const int8_t* next_rows = ahead != Ahead::kNone ? p.w.q + (o + kOut) * in : nullptr;
    for (size_t g0 = 0; g0 < groups; g0 += block_groups) {
      const size_t ng = groups - g0 < block_groups ? groups - g0 : block_groups;
      for (size_t r0 = 0; r0 < p.rows; r0 += internal::kQ8BlockRows) {
        const size_t rows = p.rows - r0 < internal::kQ8BlockRows ? p.rows - r0 : internal::kQ8BlockRows;
        internal::Q8SumsBlock b;
        b.w = p.w.q + o * in + g0 * gs, b.w_stride = in, b.outputs = count;
        b.x = ws.qx + r0 * in + g0 * gs, b.x_stride = in;
        b.x_offset = ws.x_offset + r0 * groups + g0, b.x_offset_stride = groups;
        b.rows = rows, b.group_size = gs, b.groups = ng, b.s = ws.sums;
        b.panel = ws.panel, b.pack = r0 == 0;
        b.scale = p.w.scale + o * groups + g0, b.scale_stride = groups, b.scale_tile = ws.scale_tile;
        b.sx = ws.sx + r0 * groups + g0, b.sx_stride = groups;
        b.y = p.y + r0 * p.w.out_features + o, b.y_stride = p.w.out_features;
        b.bias = g0 + ng == groups && p.bias != nullptr ? p.bias + o : nullptr, b.first = g0 == 0;
        if (next_rows != nullptr) {
          b.prefetch = next_rows + g0 * gs * kOut, b.prefetch_to_l1 = ahead == Ahead::kL1;
        }
        RunQ8Sums(p.kernel, b);
        if (!internal::Q8KernelFinishes(p.kernel)) Q8Finish(p, ws, Q8FinishArgs{o, count, r0, rows, g0, ng});
      }
    }
  }
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

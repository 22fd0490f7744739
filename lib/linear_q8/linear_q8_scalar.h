// SPDX-License-Identifier: Apache-2.0
// linear_q8, the plain C++ path: the contract's formulas written out, one output at a time. Also the workspace
// layout and the quantisation of x, which every path shares.
#ifndef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_SCALAR_H_
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_SCALAR_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/linear_q8.h"
#include "lib/common/q8.h"
#include "lib/linear_q8/linear_q8_kernels.h"

namespace edgeattn {
namespace internal {

// One call's problem after the checks: outputs [o_begin, o_end) of every row (a part, or the whole call).
struct LinearQ8Problem {
  const float* x;
  size_t rows;
  Q8Matrix w;
  const float* bias;
  float* y;
  size_t o_begin, o_end;
  unsigned char* workspace;  // LinearQ8WorkspaceBytes; null for kF32
  Q8Kernel kernel;
};

// The ACT_Q8 workspace: the block (sums and scales) first (64-byte aligned, for the kernels' aligned stores), then per
// row and group the scale of x and -128 times the sum of its quantised values, then the quantised rows.
struct Q8Workspace {
  int32_t* sums;         // [kQ8BlockRows][kQ8BlockGroups][kQ8BlockOutputs]
  float* scale_tile;     // [kQ8BlockGroups][kQ8BlockOutputs]: the block's scales, outputs in lanes
  unsigned char* panel;  // Q8PanelBytes(group_size)
  float* sx;             // [rows][groups]
  int32_t* x_offset;     // [rows][groups]: -128 * sum of qx over the group (linear_q8_x86.cc's offset)
  int8_t* qx;            // [rows][in]
  // Q8StreamLayout only (else null): sx, x_offset and qx each hold kQ8StreamWrap* more elements after their rows,
  // and `products` is [16][groups] floats, 64-byte aligned (linear_q8_kernels.h, Q8StreamRow).
  float* products;
};

inline Q8Workspace CarveQ8Workspace(unsigned char* ws, size_t rows, size_t groups, size_t group_size) {
  const uintptr_t misalign = reinterpret_cast<uintptr_t>(ws) % 64;
  unsigned char* base = ws + (misalign != 0 ? 64 - misalign : 0);
  Q8Workspace w;
  w.sums = reinterpret_cast<int32_t*>(reinterpret_cast<void*>(base));
  w.scale_tile =
      reinterpret_cast<float*>(reinterpret_cast<void*>(w.sums + kQ8BlockRows * kQ8BlockGroups * kQ8BlockOutputs));
  w.panel = base + kLinearQ8BlockBytes;
  w.sx = reinterpret_cast<float*>(reinterpret_cast<void*>(w.panel + Q8PanelBytes(group_size)));
  const bool stream = Q8StreamLayout(group_size);
  const size_t scales = rows * groups + (stream ? kQ8StreamWrapGroups : 0);
  w.x_offset = reinterpret_cast<int32_t*>(reinterpret_cast<void*>(w.sx + scales));
  w.qx = reinterpret_cast<int8_t*>(w.x_offset + scales);
  w.products = nullptr;
  if (stream) {
    unsigned char* end = reinterpret_cast<unsigned char*>(w.qx) + rows * groups * group_size + kQ8StreamWrapBytes;
    const uintptr_t mis = reinterpret_cast<uintptr_t>(end) % 64;
    w.products = reinterpret_cast<float*>(reinterpret_cast<void*>(end + (mis != 0 ? 64 - mis : 0)));
  }
  return w;
}

// sum a[i] * b[i], exact in int32 for n <= kQ8MaxGroupSize (|a| <= 127).
inline int32_t Q8GroupDot(const int8_t* a, const int8_t* b, size_t n) {
  int32_t s = 0;
  for (size_t i = 0; i < n; ++i) s += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return s;
}

// Every group of one row of x quantised by the Q8 rule (lib/common/q8.h), and its scale.
inline void Q8QuantizeRowScalar(const float* x, size_t in, size_t group_size, int8_t* qx, float* sx) {
  for (size_t g = 0; g * group_size < in; ++g)
    sx[g] = Q8QuantizeGroup(x + g * group_size, group_size, qx + g * group_size);
}

// One group's float steps of ACT_Q8 (linear_q8.h): acc + ((float)s * scale) * sx, each operation rounded once.
inline float Q8FinishStep(float acc, int32_t s, float scale, float sx) {
  return acc + (static_cast<float>(s) * scale) * sx;
}

// ACT_Q8, the contract's loop per output, with `dot` for each group's exact sum (any exact dot gives the same bits).
template <class GroupDot>
inline void LinearQ8Loop(const LinearQ8Problem& p, GroupDot dot) {
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs, out = p.w.out_features;
  const Q8Workspace ws = CarveQ8Workspace(p.workspace, p.rows, groups, gs);
  for (size_t r = 0; r < p.rows; ++r) {
    Q8QuantizeRowScalar(p.x + r * in, in, gs, ws.qx + r * in, ws.sx + r * groups);
  }
  for (size_t r = 0; r < p.rows; ++r) {
    for (size_t o = p.o_begin; o < p.o_end; ++o) {
      float acc = 0.0f;
      for (size_t g = 0; g < groups; ++g) {
        const int32_t s = dot(ws.qx + r * in + g * gs, p.w.q + o * in + g * gs, gs);
        acc = Q8FinishStep(acc, s, p.w.scale[o * groups + g], ws.sx[r * groups + g]);
      }
      p.y[r * out + o] = p.bias != nullptr ? acc + p.bias[o] : acc;
    }
  }
}

inline void LinearQ8Scalar(const LinearQ8Problem& p) { LinearQ8Loop(p, Q8GroupDot); }

// ACT_F32: per group a float dot of x with the int8 values, scaled into the row's sum; the bias last.
inline void LinearQ8F32Scalar(const LinearQ8Problem& p) {
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs, out = p.w.out_features;
  for (size_t r = 0; r < p.rows; ++r) {
    const float* x = p.x + r * in;
    for (size_t o = p.o_begin; o < p.o_end; ++o) {
      const int8_t* q = p.w.q + o * in;
      float acc = 0.0f;
      for (size_t g = 0; g < groups; ++g) {
        float t = 0.0f;
        for (size_t i = g * gs; i < (g + 1) * gs; ++i) t += x[i] * static_cast<float>(q[i]);
        acc = acc + t * p.w.scale[o * groups + g];
      }
      p.y[r * out + o] = p.bias != nullptr ? acc + p.bias[o] : acc;
    }
  }
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_SCALAR_H_

// SPDX-License-Identifier: Apache-2.0
// linear_q8 ACT_Q8 on one-lane targets of a core with the DSP extension (Cortex-M4, M7): the scalar path's loop,
// two outputs per pass. Each group's two exact sums come from dsp::DotS8Dsp2 (x's word loaded and sign-extended
// once for both outputs' SMLADs); each output's float steps are the scalar path's (internal::Q8FinishStep) in its
// order, so the bits are the scalar path's. An odd last output runs alone on dsp::DotS8Dsp.
#ifndef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_DSP_H_
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_DSP_H_

#include <stddef.h>
#include <stdint.h>

#include "lib/common/q8_dot_dsp.h"
#include "lib/linear_q8/linear_q8_scalar.h"

#if EDGEATTN_DSP
namespace edgeattn {
namespace dsp {

inline void LinearQ8Dsp(const internal::LinearQ8Problem& p) {
  const size_t in = p.w.in_features, gs = p.w.group_size, groups = in / gs, out = p.w.out_features;
  const internal::Q8Workspace ws = internal::CarveQ8Workspace(p.workspace, p.rows, groups, gs);
  for (size_t r = 0; r < p.rows; ++r) {
    internal::Q8QuantizeRowScalar(p.x + r * in, in, gs, ws.qx + r * in, ws.sx + r * groups);
  }
  for (size_t r = 0; r < p.rows; ++r) {
    const int8_t* qx = ws.qx + r * in;
    const float* sx = ws.sx + r * groups;
    float* y = p.y + r * out;
    size_t o = p.o_begin;
    for (; o + 2 <= p.o_end; o += 2) {
      const int8_t* q0 = p.w.q + o * in;
      const float* scale0 = p.w.scale + o * groups;
      float acc0 = 0.0f, acc1 = 0.0f;
      for (size_t g = 0; g < groups; ++g) {
        int32_t s[2];
        DotS8Dsp2(qx + g * gs, q0 + g * gs, q0 + in + g * gs, gs, s);
        acc0 = internal::Q8FinishStep(acc0, s[0], scale0[g], sx[g]);
        acc1 = internal::Q8FinishStep(acc1, s[1], scale0[groups + g], sx[g]);
      }
      y[o] = p.bias != nullptr ? acc0 + p.bias[o] : acc0;
      y[o + 1] = p.bias != nullptr ? acc1 + p.bias[o + 1] : acc1;
    }
    if (o < p.o_end) {
      float acc = 0.0f;
      for (size_t g = 0; g < groups; ++g) {
        const int32_t s = DotS8Dsp(qx + g * gs, p.w.q + o * in + g * gs, gs);
        acc = internal::Q8FinishStep(acc, s, p.w.scale[o * groups + g], sx[g]);
      }
      y[o] = p.bias != nullptr ? acc + p.bias[o] : acc;
    }
  }
}

}  // namespace dsp
}  // namespace edgeattn
#endif  // EDGEATTN_DSP

#endif  // EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_DSP_H_

// SPDX-License-Identifier: Apache-2.0
// linear_q8's AArch64 int8 kernel: dotprod (sdot, Armv8.2 and later), outputs in lanes, behind a run-time check
// (HWCAP_ASIMDDP). sdot multiplies signed by signed bytes, so unlike VNNI no offset is needed.
//
// Lanes = outputs, four at a time: a chunk of 16 input bytes of four outputs is transposed as a 4 x 4 matrix of
// dwords, so vector j holds inputs 4j .. 4j + 3 of the four outputs, and one sdot of it with those four inputs
// of x broadcast adds them to the four outputs' sums. A block's 16 outputs run as four such quarters; the
// transpose is paid once per block of outputs and groups (the first block of rows keeps it in the panel).
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/linear_q8/linear_q8_kernels.h"

#if EDGEATTN_Q8_DOTPROD_KERNEL
#include <arm_neon.h>

#if defined(__ARM_FEATURE_DOTPROD)
#define EDGEATTN_DOTPROD
#else
#define EDGEATTN_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

namespace edgeattn {
namespace internal {
namespace {

// 16 bytes from p, or the first `bytes` of them and zeros (the block's last chunk: never read past a row).
EDGEATTN_DOTPROD inline int8x16_t LoadChunk(const int8_t* p, size_t bytes) {
  if (bytes == 16) return vld1q_s8(p);
  int8_t buf[16] = {};
  memcpy(buf, p, bytes);
  return vld1q_s8(buf);
}

// t[j] = dword j of each of the quarter's four outputs (outputs past b.outputs repeat the last one).
EDGEATTN_DOTPROD inline void PackQuarter(const Q8SumsBlock& b, size_t first, size_t i0, size_t bytes, int8x16_t t[4]) {
  int32x4_t a[4];
  for (size_t c = 0; c < 4; ++c) {
    const size_t k = first + c < b.outputs ? first + c : b.outputs - 1;
    a[c] = vreinterpretq_s32_s8(LoadChunk(b.w + k * b.w_stride + i0, bytes));
  }
  const int32x4x2_t t01 = vtrnq_s32(a[0], a[1]), t23 = vtrnq_s32(a[2], a[3]);
  t[0] = vreinterpretq_s8_s32(vcombine_s32(vget_low_s32(t01.val[0]), vget_low_s32(t23.val[0])));
  t[1] = vreinterpretq_s8_s32(vcombine_s32(vget_low_s32(t01.val[1]), vget_low_s32(t23.val[1])));
  t[2] = vreinterpretq_s8_s32(vcombine_s32(vget_high_s32(t01.val[0]), vget_high_s32(t23.val[0])));
  t[3] = vreinterpretq_s8_s32(vcombine_s32(vget_high_s32(t01.val[1]), vget_high_s32(t23.val[1])));
}

EDGEATTN_DOTPROD inline int8x16_t BroadcastDword(const int8_t* p) {
  int32_t v;
  memcpy(&v, p, sizeof(v));
  return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

template <size_t kRows>
EDGEATTN_DOTPROD void SumsQuarter(const Q8SumsBlock& b, size_t first) {
  const size_t n = b.groups * b.group_size, dwords_per_group = b.group_size / 4;
  int32x4_t acc[kRows];
  for (size_t r = 0; r < kRows; ++r) acc[r] = vdupq_n_s32(0);
  size_t group = 0, left = dwords_per_group;
  for (size_t i0 = 0; i0 < n; i0 += 16) {
    const size_t bytes = n - i0 < 16 ? n - i0 : 16;
    // The quarter's chunk in the block's panel: 64 bytes per quarter and 16 input bytes.
    int8x16_t t[4];
    unsigned char* panel = b.panel + (first / 4 * ((n + 15) / 16) + i0 / 16) * 64;
    if (b.pack) {
      PackQuarter(b, first, i0, bytes, t);
      for (size_t j = 0; j < 4; ++j) vst1q_s8(reinterpret_cast<int8_t*>(panel) + 16 * j, t[j]);
    } else {
      for (size_t j = 0; j < 4; ++j) t[j] = vld1q_s8(reinterpret_cast<const int8_t*>(panel) + 16 * j);
    }
    for (size_t j = 0; j < bytes / 4; ++j) {
      for (size_t r = 0; r < kRows; ++r) {
        acc[r] = vdotq_s32(acc[r], t[j], BroadcastDword(b.x + r * b.x_stride + i0 + 4 * j));
      }
      if (--left != 0) continue;
      for (size_t r = 0; r < kRows; ++r) {
        vst1q_s32(b.s + (r * kQ8BlockGroups + group) * kQ8BlockOutputs + first, acc[r]);
        acc[r] = vdupq_n_s32(0);
      }
      ++group;
      left = dwords_per_group;
    }
  }
}

template <size_t kRows>
EDGEATTN_DOTPROD void SumsRows(const Q8SumsBlock& b) {
  if (b.pack) Q8FillScaleTile(b);
  for (size_t first = 0; first < b.outputs; first += 4) SumsQuarter<kRows>(b, first);
}

// One row (decode): no transpose. Per output, sdot of its 16 bytes with x's 16 bytes adds four lanes of partial
// sums; at the group's end two levels of pairwise adds (addp) turn four outputs' lanes into their four sums, in
// lanes. Per 4 outputs x 16 inputs: 5 loads and 4 sdot (against the transpose's 5 loads, 6 permutes, 4
// broadcasts and 4 sdot), plus 3 addp per group (group_size % 16 == 0).
EDGEATTN_DOTPROD void SumsOneRowReduced(const Q8SumsBlock& b) {
  Q8FillScaleTile(b);
  const size_t gs = b.group_size;
  for (size_t first = 0; first < b.outputs; first += 4) {
    const int8_t* w[4];
    for (size_t c = 0; c < 4; ++c) w[c] = b.w + (first + c < b.outputs ? first + c : b.outputs - 1) * b.w_stride;
    for (size_t g = 0; g < b.groups; ++g) {
      int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
      for (size_t i = g * gs; i < (g + 1) * gs; i += 16) {
        const int8x16_t xv = vld1q_s8(b.x + i);
        a0 = vdotq_s32(a0, vld1q_s8(w[0] + i), xv), a1 = vdotq_s32(a1, vld1q_s8(w[1] + i), xv);
        a2 = vdotq_s32(a2, vld1q_s8(w[2] + i), xv), a3 = vdotq_s32(a3, vld1q_s8(w[3] + i), xv);
      }
      vst1q_s32(b.s + g * kQ8BlockOutputs + first, vpaddq_s32(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3)));
    }
  }
}

}  // namespace

void Q8SumsDotprod(const Q8SumsBlock& b) noexcept {
  // A block that packs and has one row is a call with one row: no later block needs the panel.
  if (b.pack && b.rows == 1 && b.group_size % 16 == 0) {
    SumsOneRowReduced(b);
    return;
  }
  WithRowCount(b.rows, [&b](auto rows) { SumsRows<decltype(rows)::value>(b); });
}

}  // namespace internal
}  // namespace edgeattn

#else  // no dotprod kernel in this build

namespace edgeattn {
namespace internal {
void Q8SumsDotprod(const Q8SumsBlock& b) noexcept { (void)b; }
}  // namespace internal
}  // namespace edgeattn

#endif

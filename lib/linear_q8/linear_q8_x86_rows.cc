// SPDX-License-Identifier: Apache-2.0
// linear_q8's AVX512-VNNI kernel for blocks of rows (any number of rows, group_size % 4 == 0): the weights
// through transposed panels, the finish in registers (Q8KernelFinishes; linear_q8_x86.cc has the one-row
// kernels and the offset that makes vpdpbusd's unsigned-by-signed products signed).
//
// A chunk of 64 input bytes of 16 outputs is transposed as a 16 x 16 matrix of dwords, so that vector j of the
// panel holds inputs 4j .. 4j + 3 of all 16 outputs, and one vpdpbusd of it with those four inputs of a row of
// x broadcast adds them to 16 outputs. The transpose (56 shuffles per chunk) is paid once per block of outputs and
// groups: the first block of rows writes the panel to the workspace, the others read it (L1).
//
// A block of more than 16 outputs (up to kQ8WideBlockOutputs, the driver's choice) has two panels side by side,
// outputs 0 .. 15 then 16 .. 31, and each broadcast of x feeds a vpdpbusd of each: two loads of x per four
// vpdpbusd instead of one per two, 20% less time per vpdpbusd (docs/performance.md, "Rows 64 against oneDNN").
#include <stddef.h>
#include <stdint.h>

#include "lib/linear_q8/linear_q8_kernels.h"

#if EDGEATTN_Q8_X86_KERNELS
#include "lib/linear_q8/linear_q8_x86.h"

namespace edgeattn {
namespace internal {
namespace {

using q8x86::BroadcastDword;
using q8x86::FinishGroup;
using q8x86::StartAccumulator;
using q8x86::StoreAccumulator;

// The 64-byte chunk at i0 of up to 16 outputs (rows `stride` bytes apart from w; m dwords, the rest zero),
// offset to unsigned and transposed into t. Outputs past `outputs` repeat the last one.
EDGEATTN_AVX512VNNI inline void PackChunk(const int8_t* w, size_t stride, size_t outputs, size_t i0, size_t m,
                                          unsigned char* t) {
  const __mmask64 mask = m == 16 ? ~__mmask64{0} : (__mmask64{1} << (4 * m)) - 1;
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i r[16];
  for (size_t k = 0; k < 16; ++k) {
    const int8_t* row = w + (k < outputs ? k : outputs - 1) * stride + i0;
    r[k] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, row), offset);
  }
  q8x86::Transpose16x16(r);
  for (size_t j = 0; j < 16; ++j) _mm512_store_si512(t + 64 * j, r[j]);
}

// One panel (up to 16 outputs from w, every chunk of the block's groups, transposed) at `panel`.
EDGEATTN_AVX512VNNI void PackPanel(const Q8SumsBlock& b, const int8_t* w, size_t outputs, unsigned char* panel) {
  const size_t n = b.groups * b.group_size;
  for (size_t i0 = 0; i0 < n; i0 += 64)
    PackChunk(w, b.w_stride, outputs, i0, (n - i0) / 4 < 16 ? (n - i0) / 4 : 16, panel + i0 / 64 * 1024);
}

// The block's panels and scales (tile[j][k], 16 or 32 outputs per group), by the first block of rows.
EDGEATTN_AVX512VNNI void PackBlock(const Q8SumsBlock& b) {
  if (b.outputs <= kQ8BlockOutputs) {
    q8x86::PackScales(b.scale, b.scale_stride, b.outputs, b.groups, b.scale_tile, kQ8BlockOutputs);
    PackPanel(b, b.w, b.outputs, b.panel);
    return;
  }
  const size_t second = b.outputs - kQ8BlockOutputs;
  q8x86::PackScales(b.scale, b.scale_stride, kQ8BlockOutputs, b.groups, b.scale_tile, kQ8WideBlockOutputs);
  q8x86::PackScales(b.scale + kQ8BlockOutputs * b.scale_stride, b.scale_stride, second, b.groups,
                    b.scale_tile + kQ8BlockOutputs, kQ8WideBlockOutputs);
  PackPanel(b, b.w, kQ8BlockOutputs, b.panel);
  PackPanel(b, b.w + kQ8BlockOutputs * b.w_stride, second, b.panel + kQ8BlockOutputs * b.groups * b.group_size);
}

// kRows rows against one panel: per group the sums (per dword of the panel one load for every row and one
// vpdpbusd per row with that row's dword of x broadcast), then the finish in registers; the float accumulators
// pass through y between blocks. kDwords is group_size / 4 where it is a compile-time constant (0: `dwords`): the
// loop then unrolls into straight loads and vpdpbusd, with no counters between them.
template <size_t kRows, size_t kDwords>
EDGEATTN_AVX512VNNI void PanelRows(const Q8SumsBlock& b) {
  const size_t gs = b.group_size, dwords = kDwords != 0 ? kDwords : gs / 4, groups = b.groups;
  const size_t x_stride = b.x_stride, offset_stride = b.x_offset_stride, sx_stride = b.sx_stride;
  const int8_t* x = b.x;
  const unsigned char* panel = b.panel;
  __m512 acc[kRows];
  for (size_t r = 0; r < kRows; ++r) acc[r] = StartAccumulator(b, r);
  for (size_t j = 0; j < groups; ++j) {
    __m512i s[kRows];
    for (size_t r = 0; r < kRows; ++r) s[r] = _mm512_set1_epi32(b.x_offset[r * offset_stride + j]);
#pragma GCC unroll 16
    for (size_t d = 0; d < dwords; ++d) {
      const __m512i p = _mm512_load_si512(panel + 64 * d);
#pragma GCC unroll 4
      for (size_t r = 0; r < kRows; ++r) s[r] = _mm512_dpbusd_epi32(s[r], p, BroadcastDword(x + r * x_stride + 4 * d));
    }
    panel += 64 * dwords, x += gs;
    const __m512 scale = _mm512_load_ps(b.scale_tile + j * kQ8BlockOutputs);
    for (size_t r = 0; r < kRows; ++r)
      acc[r] = FinishGroup(acc[r], s[r], scale, _mm512_set1_ps(b.sx[r * sx_stride + j]));
  }
  for (size_t r = 0; r < kRows; ++r) StoreAccumulator(b, r, acc[r]);
}

// kRows rows against two panels (17 .. 32 outputs): each broadcast of x feeds both panels' vpdpbusd.
template <size_t kRows, size_t kDwords>
EDGEATTN_AVX512VNNI void PanelRowsWide(const Q8SumsBlock& b) {
  const size_t gs = b.group_size, dwords = kDwords != 0 ? kDwords : gs / 4, groups = b.groups;
  const size_t x_stride = b.x_stride, offset_stride = b.x_offset_stride, sx_stride = b.sx_stride;
  const ptrdiff_t second = static_cast<ptrdiff_t>(kQ8BlockOutputs * groups * gs);
  const int8_t* x = b.x;
  const unsigned char* panel = b.panel;
  __m512 acc[2 * kRows];
  for (size_t r = 0; r < kRows; ++r) {
    acc[r] = StartAccumulator(b, r);
    acc[kRows + r] = StartAccumulator(b, r, kQ8BlockOutputs);
  }
  for (size_t j = 0; j < groups; ++j) {
    __m512i s[2 * kRows];
    for (size_t r = 0; r < kRows; ++r) s[r] = s[kRows + r] = _mm512_set1_epi32(b.x_offset[r * offset_stride + j]);
#pragma GCC unroll 16
    for (size_t d = 0; d < dwords; ++d) {
      const __m512i p0 = _mm512_load_si512(panel + 64 * d), p1 = _mm512_load_si512(panel + second + 64 * d);
#pragma GCC unroll 4
      for (size_t r = 0; r < kRows; ++r) {
        const __m512i xv = BroadcastDword(x + r * x_stride + 4 * d);
        s[r] = _mm512_dpbusd_epi32(s[r], p0, xv);
        s[kRows + r] = _mm512_dpbusd_epi32(s[kRows + r], p1, xv);
      }
    }
    panel += 64 * dwords, x += gs;
    const float* tile = b.scale_tile + j * kQ8WideBlockOutputs;
    const __m512 scale0 = _mm512_load_ps(tile), scale1 = _mm512_load_ps(tile + kQ8BlockOutputs);
    for (size_t r = 0; r < kRows; ++r) {
      const __m512 sx = _mm512_set1_ps(b.sx[r * sx_stride + j]);
      acc[r] = FinishGroup(acc[r], s[r], scale0, sx);
      acc[kRows + r] = FinishGroup(acc[kRows + r], s[kRows + r], scale1, sx);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    StoreAccumulator(b, r, acc[r]);
    StoreAccumulator(b, r, acc[kRows + r], kQ8BlockOutputs);
  }
}

template <size_t kRows, size_t kDwords>
EDGEATTN_AVX512VNNI void Rows(const Q8SumsBlock& b) {
  if (b.outputs > kQ8BlockOutputs) {
    PanelRowsWide<kRows, kDwords>(b);
  } else {
    PanelRows<kRows, kDwords>(b);
  }
}

template <size_t kRows>
EDGEATTN_AVX512VNNI void RowsAnyGroup(const Q8SumsBlock& b) {
  switch (b.group_size) {  // llama2.c's and ggml's group sizes as constants
    case 32:
      return Rows<kRows, 8>(b);
    case 64:
      return Rows<kRows, 16>(b);
    default:
      return Rows<kRows, 0>(b);
  }
}

}  // namespace

void Q8PanelRowsAvx512Vnni(const Q8SumsBlock& b) noexcept {
  if (b.pack) PackBlock(b);
  WithRowCount(b.rows, [&b](auto rows) { RowsAnyGroup<decltype(rows)::value>(b); });
}

}  // namespace internal
}  // namespace edgeattn

#else  // not x86-64

namespace edgeattn {
namespace internal {
void Q8PanelRowsAvx512Vnni(const Q8SumsBlock& b) noexcept { (void)b; }
}  // namespace internal
}  // namespace edgeattn

#endif

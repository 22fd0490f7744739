// SPDX-License-Identifier: Apache-2.0
// linear_q8's x86 int8 kernel: AVX512-VNNI (vpdpbusd), outputs in lanes, behind a run-time check.
//
// vpdpbusd multiplies unsigned by signed bytes and adds each lane's four products into an int32 lane. For
// signed weights times signed activations the weights go in as w ^ 0x80 = w + 128 (unsigned, and exact for any
// int8, -128 included) and the quantised activations as they are; the sum then holds 128 * sum(qx) too, which
// the row's group sum of qx (computed once per row when x is quantised) removes. |qx| <= 127 and group_size <=
// kQ8MaxGroupSize keep every lane inside int32.
//
// Lanes = outputs: a chunk of 64 input bytes of 16 outputs is loaded as 16 vectors (one output each) and
// transposed as a 16 x 16 matrix of dwords, so vector j holds inputs 4j .. 4j + 3 of all 16 outputs; one vpdpbusd
// of it with those four inputs of x broadcast adds them to 16 outputs at once, and group sums come out in lanes
// without a horizontal reduction. The transpose (64 shuffles per chunk) is paid once per block of outputs and
// groups: the first block of rows writes it to the workspace's panel, the others read it from there (L1).
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/linear_q8/linear_q8_kernels.h"

#if EDGEATTN_Q8_X86_KERNELS
// GCC 12 reports its own avx512fintrin.h's undefined-vector idiom (__Y) as (maybe-)uninitialized once inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#define EDGEATTN_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace edgeattn {
namespace internal {
namespace {

// Four int8 of x as one dword broadcast to every lane (any alignment).
EDGEATTN_AVX512VNNI inline __m512i BroadcastDword(const int8_t* p) {
  int32_t v;
  memcpy(&v, p, sizeof(v));
  return _mm512_set1_epi32(v);
}

// r[k] (dword j of output k) -> r[j] (dword k of every output j): unpack dwords, then qwords, within 128-bit
// lanes, then two rounds of 128-bit lane shuffles across vectors.
EDGEATTN_AVX512VNNI inline void Transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_epi32(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_epi32(r[k], r[k + 1]);
  }
  // c[4q + e]: lane L holds dword 4L + e of outputs 4q .. 4q + 3.
  __m512i c[16];
  for (int q = 0; q < 4; ++q) {
    c[4 * q + 0] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
    c[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
    c[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
    c[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
  }
  // For each e, a 4 x 4 transpose of 128-bit lanes across c[e], c[4 + e], c[8 + e], c[12 + e].
  for (int e = 0; e < 4; ++e) {
    const __m512i lo01 = _mm512_shuffle_i32x4(c[e], c[4 + e], 0x44), hi01 = _mm512_shuffle_i32x4(c[e], c[4 + e], 0xEE);
    const __m512i lo23 = _mm512_shuffle_i32x4(c[8 + e], c[12 + e], 0x44);
    const __m512i hi23 = _mm512_shuffle_i32x4(c[8 + e], c[12 + e], 0xEE);
    r[e] = _mm512_shuffle_i32x4(lo01, lo23, 0x88);
    r[4 + e] = _mm512_shuffle_i32x4(lo01, lo23, 0xDD);
    r[8 + e] = _mm512_shuffle_i32x4(hi01, hi23, 0x88);
    r[12 + e] = _mm512_shuffle_i32x4(hi01, hi23, 0xDD);
  }
}

// The block's 64-byte chunk at i0 of every output (m dwords, the rest zero), offset to unsigned and transposed
// into t. Outputs past b.outputs repeat the last one.
EDGEATTN_AVX512VNNI inline void PackChunk(const Q8SumsBlock& b, size_t i0, size_t m, int32_t t[16][16]) {
  const __mmask64 mask = m == 16 ? ~__mmask64{0} : (__mmask64{1} << (4 * m)) - 1;
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i r[16];
  for (size_t k = 0; k < 16; ++k) {
    const int8_t* row = b.w + (k < b.outputs ? k : b.outputs - 1) * b.w_stride + i0;
    r[k] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, row), offset);
  }
  Transpose16x16(r);
  for (size_t j = 0; j < 16; ++j) _mm512_store_si512(t[j], r[j]);
}

// The block's scales with outputs in lanes: its 16 rows of up to 16 scales transposed as dwords.
EDGEATTN_AVX512VNNI inline void PackScales(const Q8SumsBlock& b) {
  const __mmask16 mask = static_cast<__mmask16>((1u << b.groups) - 1);
  __m512i r[16];
  for (size_t k = 0; k < 16; ++k) {
    const float* row = b.scale + (k < b.outputs ? k : b.outputs - 1) * b.scale_stride;
    r[k] = _mm512_castps_si512(_mm512_maskz_loadu_ps(mask, row));
  }
  Transpose16x16(r);
  for (size_t j = 0; j < b.groups; ++j) _mm512_store_si512(b.scale_tile + j * kQ8BlockOutputs, r[j]);
}

template <size_t kRows>
EDGEATTN_AVX512VNNI void SumsRows(const Q8SumsBlock& b) {
  if (b.pack) PackScales(b);
  const size_t n = b.groups * b.group_size, dwords_per_group = b.group_size / 4;
  __m512i acc[kRows];
  for (size_t r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_si512();
  size_t group = 0, left = dwords_per_group;
  for (size_t i0 = 0; i0 < n; i0 += 64) {
    const size_t m = (n - i0) / 4 < 16 ? (n - i0) / 4 : 16;
    // The chunk's 16 x 16 dwords in the block's panel (1 KiB per chunk; 64-byte aligned).
    auto* t = reinterpret_cast<int32_t(*)[16]>(reinterpret_cast<void*>(b.panel + i0 / 64 * 1024));
    if (b.pack) PackChunk(b, i0, m, t);
    for (size_t j = 0; j < m; ++j) {
      const __m512i tj = _mm512_load_si512(t[j]);
      for (size_t r = 0; r < kRows; ++r) {
        acc[r] = _mm512_dpbusd_epi32(acc[r], tj, BroadcastDword(b.x + r * b.x_stride + i0 + 4 * j));
      }
      if (--left != 0) continue;
      for (size_t r = 0; r < kRows; ++r) {
        const int32_t correction = 128 * b.x_sums[r * b.x_sums_stride + group];
        int32_t* s = b.s + (r * kQ8BlockGroups + group) * kQ8BlockOutputs;
        _mm512_store_si512(s, _mm512_sub_epi32(acc[r], _mm512_set1_epi32(correction)));
        acc[r] = _mm512_setzero_si512();
      }
      ++group;
      left = dwords_per_group;
    }
  }
}

// One row (decode): no transpose. Each output's 64 bytes go through vpdpbusd with the same 64 bytes of x, and
// the 16 vectors of partial sums are reduced to one vector per 16-byte piece of the chunk, outputs in lanes:
// unpack and add dwords, then qwords, within 128-bit lanes (each lane then holds four outputs' sums over its
// piece), then a 4 x 4 transpose of the 128-bit lanes. About 100 instructions per 16 outputs x 64 inputs
// against the transpose's 150; the pieces are added into the group's sum (group_size % 16 == 0).
EDGEATTN_AVX512VNNI inline void ReducePieces(__m512i r[16], __m512i piece[4]) {
  __m512i a[8], q[4];
  for (int k = 0; k < 16; k += 2) {
    a[k / 2] = _mm512_add_epi32(_mm512_unpacklo_epi32(r[k], r[k + 1]), _mm512_unpackhi_epi32(r[k], r[k + 1]));
  }
  for (int g = 0; g < 4; ++g) {  // outputs 4g .. 4g + 3: a[2g] holds 4g, 4g + 1; a[2g + 1] holds 4g + 2, 4g + 3
    q[g] =
        _mm512_add_epi32(_mm512_unpacklo_epi64(a[2 * g], a[2 * g + 1]), _mm512_unpackhi_epi64(a[2 * g], a[2 * g + 1]));
  }
  const __m512i t0 = _mm512_shuffle_i32x4(q[0], q[1], 0x44), t1 = _mm512_shuffle_i32x4(q[0], q[1], 0xEE);
  const __m512i t2 = _mm512_shuffle_i32x4(q[2], q[3], 0x44), t3 = _mm512_shuffle_i32x4(q[2], q[3], 0xEE);
  piece[0] = _mm512_shuffle_i32x4(t0, t2, 0x88), piece[1] = _mm512_shuffle_i32x4(t0, t2, 0xDD);
  piece[2] = _mm512_shuffle_i32x4(t1, t3, 0x88), piece[3] = _mm512_shuffle_i32x4(t1, t3, 0xDD);
}

EDGEATTN_AVX512VNNI void SumsOneRowReduced(const Q8SumsBlock& b) {
  PackScales(b);
  const size_t n = b.groups * b.group_size, pieces_per_group = b.group_size / 16;
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc = _mm512_setzero_si512();
  size_t group = 0, left = pieces_per_group;
  for (size_t i0 = 0; i0 < n; i0 += 64) {
    const size_t bytes = n - i0 < 64 ? n - i0 : 64;
    const __mmask64 mask = bytes == 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
    const __m512i xv = _mm512_maskz_loadu_epi8(mask, b.x + i0);
    __m512i r[16], piece[4];
    for (size_t k = 0; k < 16; ++k) {
      const int8_t* row = b.w + (k < b.outputs ? k : b.outputs - 1) * b.w_stride + i0;
      const __m512i w = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, row), offset);
      r[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w, xv);
    }
    ReducePieces(r, piece);
    for (size_t l = 0; l < bytes / 16; ++l) {
      acc = _mm512_add_epi32(acc, piece[l]);
      if (--left != 0) continue;
      const __m512i correction = _mm512_set1_epi32(128 * b.x_sums[group]);
      _mm512_store_si512(b.s + group * kQ8BlockOutputs, _mm512_sub_epi32(acc, correction));
      acc = _mm512_setzero_si512();
      ++group;
      left = pieces_per_group;
    }
  }
}

}  // namespace

void Q8SumsAvx512Vnni(const Q8SumsBlock& b) noexcept {
  // A block that packs and has one row is a call with one row: no later block needs the panel.
  if (b.pack && b.rows == 1 && b.group_size % 16 == 0) {
    SumsOneRowReduced(b);
    return;
  }
  WithRowCount(b.rows, [&b](auto rows) { SumsRows<decltype(rows)::value>(b); });
}

void Q8SumsAvxVnni(const Q8SumsBlock& b) noexcept { (void)b; }

}  // namespace internal
}  // namespace edgeattn

#else  // not x86-64

namespace edgeattn {
namespace internal {
void Q8SumsAvx512Vnni(const Q8SumsBlock& b) noexcept { (void)b; }
void Q8SumsAvxVnni(const Q8SumsBlock& b) noexcept { (void)b; }
}  // namespace internal
}  // namespace edgeattn

#endif

// SPDX-License-Identifier: Apache-2.0
// What linear_q8's two AVX512-VNNI files share (linear_q8_x86.cc: one row; linear_q8_x86_rows.cc: rows through
// transposed panels): the target attribute, the 16 x 16 dword transpose, the block's scales with outputs in lanes
// and the finish step on 16 outputs in lanes. Include only where EDGEATTN_Q8_X86_KERNELS is set.
#ifndef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_X86_H_
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_X86_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/linear_q8/linear_q8_kernels.h"

// GCC 12 reports its own avx512fintrin.h's undefined-vector idiom (__Y) as (maybe-)uninitialized once inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#define EDGEATTN_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace edgeattn {
namespace internal {
namespace q8x86 {

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

// Up to 16 outputs' scales (rows `stride` floats apart, `outputs` of them, the rest repeating the last) of
// `groups` <= 16 groups, transposed as dwords: tile[j * tile_stride + k] = scale of output k, group j.
EDGEATTN_AVX512VNNI inline void PackScales(const float* scale, size_t stride, size_t outputs, size_t groups,
                                           float* tile, size_t tile_stride) {
  const __mmask16 mask = static_cast<__mmask16>((1u << groups) - 1);
  __m512i r[16];
  for (size_t k = 0; k < 16; ++k) {
    const float* row = scale + (k < outputs ? k : outputs - 1) * stride;
    r[k] = _mm512_castps_si512(_mm512_maskz_loadu_ps(mask, row));
  }
  Transpose16x16(r);
  for (size_t j = 0; j < groups; ++j) _mm512_store_si512(tile + j * tile_stride, r[j]);
}

// ---- The finish on 16 outputs in lanes: the shared finish's operations (linear_q8-inl.h), in its order, each
// one IEEE operation of the caller's rounding mode (the build never contracts a multiply and an add).
EDGEATTN_AVX512VNNI inline __mmask16 OutputMask(size_t outputs) {
  return outputs >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << outputs) - 1);
}

// Row r's accumulators of outputs [k0, k0 + 16) of the block: zero, or y as the previous groups left it.
EDGEATTN_AVX512VNNI inline __m512 StartAccumulator(const Q8SumsBlock& b, size_t r, size_t k0 = 0) {
  return b.first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(OutputMask(b.outputs - k0), b.y + r * b.y_stride + k0);
}

// acc + ((float)s * scale) * sx.
EDGEATTN_AVX512VNNI inline __m512 FinishGroup(__m512 acc, __m512i s, __m512 scale, __m512 sx) {
  return _mm512_add_ps(acc, _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), scale), sx));
}

EDGEATTN_AVX512VNNI inline void StoreAccumulator(const Q8SumsBlock& b, size_t r, __m512 acc, size_t k0 = 0) {
  const __mmask16 mask = OutputMask(b.outputs - k0);
  if (b.bias != nullptr) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(mask, b.bias + k0));
  _mm512_mask_storeu_ps(b.y + r * b.y_stride + k0, mask, acc);
}

}  // namespace q8x86
}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_X86_H_

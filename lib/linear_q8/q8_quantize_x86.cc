// SPDX-License-Identifier: Apache-2.0
// linear_q8's x86 quantiser of x (ACT_Q8) with AVX-512F, for the calls the AVX512-VNNI kernel runs with groups of
// 32 or 64 (linear_q8_kernels.h, Q8QuantizeGroupsAvx512): sixteen groups at a time with groups in lanes.
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

#define EDGEATTN_AVX512F __attribute__((target("avx512f")))

namespace edgeattn {
namespace internal {
namespace {

// Sixteen groups' max |x| (and later their sums) reduced together: 45 shuffles and operations for all sixteen,
// where one group alone takes 8, and one division gives their scales.

// Lane j of the result: op over the lanes of m[j]. Unpack 32-bit, then 64-bit elements within 128-bit blocks (each
// block then holds four vectors' partials), then 128-bit blocks across vectors; op exact and order-free (max of
// non-negative floats, integer sums).
template <class Op>
EDGEATTN_AVX512F inline __m512 ReduceAcross16(const __m512 m[16], Op op) {
  __m512 c[8], e[4];
  for (size_t k = 0; k < 8; ++k)
    c[k] = op(_mm512_unpacklo_ps(m[2 * k], m[2 * k + 1]), _mm512_unpackhi_ps(m[2 * k], m[2 * k + 1]));
  for (size_t k = 0; k < 4; ++k) {
    const __m512d a = _mm512_castps_pd(c[2 * k]), b = _mm512_castps_pd(c[2 * k + 1]);
    e[k] = op(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  const __m512 f01 = op(_mm512_shuffle_f32x4(e[0], e[1], 0x44), _mm512_shuffle_f32x4(e[0], e[1], 0xEE));
  const __m512 f23 = op(_mm512_shuffle_f32x4(e[2], e[3], 0x44), _mm512_shuffle_f32x4(e[2], e[3], 0xEE));
  return op(_mm512_shuffle_f32x4(f01, f23, 0x88), _mm512_shuffle_f32x4(f01, f23, 0xDD));
}

struct MaxOp {
  EDGEATTN_AVX512F __m512 operator()(__m512 a, __m512 b) const { return _mm512_max_ps(a, b); }
};
struct AddOp {  // int32 lanes
  EDGEATTN_AVX512F __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
};

template <size_t kGroup>
EDGEATTN_AVX512F void QuantizeGroups(const float* x, size_t groups, int8_t* q, float* scale_out, int32_t* offset) {
  constexpr size_t kVectors = kGroup / 16;
  const __m512 low = _mm512_set1_ps(-127.0f), high = _mm512_set1_ps(127.0f);
  for (size_t g0 = 0; g0 < groups; g0 += 16) {
    const size_t n = groups - g0 < 16 ? groups - g0 : 16;
    const float* xb = x + g0 * kGroup;
    __m512 m[16];
    for (size_t j = 0; j < 16; ++j) {
      m[j] = _mm512_setzero_ps();
      if (j >= n) continue;
      for (size_t v = 0; v < kVectors; ++v)
        m[j] = _mm512_max_ps(m[j], _mm512_abs_ps(_mm512_loadu_ps(xb + j * kGroup + 16 * v)));
    }
    // max |x| / 127, one float division per group as Q8Scale's; a scale of 0 stores q = 0 (Q8Quantize).
    const __m512 scale = _mm512_div_ps(ReduceAcross16(m, MaxOp()), high);
    const __mmask16 valid = static_cast<__mmask16>((1u << n) - 1);
    _mm512_mask_storeu_ps(scale_out + g0, valid, scale);
    const __mmask16 zero = _mm512_cmp_ps_mask(scale, _mm512_setzero_ps(), _CMP_EQ_OQ);
    __m512 sums[16];
    for (size_t j = 0; j < 16; ++j) {
      __m512i sum = _mm512_setzero_si512();
      int8_t* qg = q + (g0 + j) * kGroup;
      if (j < n && ((zero >> j) & 1u) != 0) {
        memset(qg, 0, kGroup);
      } else if (j < n) {
        const __m512 s = _mm512_permutexvar_ps(_mm512_set1_epi32(static_cast<int>(j)), scale);
        for (size_t v = 0; v < kVectors; ++v) {
          // x / scale (the caller's rounding mode), clamped to [-127, 127], rounded to nearest even.
          const __m512 r =
              _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(_mm512_loadu_ps(xb + j * kGroup + 16 * v), s), low), high);
          const __m512i qi = _mm512_cvtps_epi32(_mm512_roundscale_ps(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
          sum = _mm512_add_epi32(sum, qi);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(qg + 16 * v), _mm512_cvtepi32_epi8(qi));
        }
      }
      sums[j] = _mm512_castsi512_ps(sum);
    }
    const __m512i total = _mm512_castps_si512(ReduceAcross16(sums, AddOp()));
    _mm512_mask_storeu_epi32(offset + g0, valid, _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(total, 7)));
  }
}

}  // namespace

void Q8QuantizeGroupsAvx512(const float* x, size_t groups, size_t group_size, int8_t* q, float* scale,
                            int32_t* offset) noexcept {
  if (group_size == 64) {
    QuantizeGroups<64>(x, groups, q, scale, offset);
  } else {
    QuantizeGroups<32>(x, groups, q, scale, offset);
  }
}

}  // namespace internal
}  // namespace edgeattn

#else  // not x86-64

namespace edgeattn {
namespace internal {
void Q8QuantizeGroupsAvx512(const float* x, size_t groups, size_t group_size, int8_t* q, float* scale,
                            int32_t* offset) noexcept {
  (void)x, (void)groups, (void)group_size, (void)q, (void)scale, (void)offset;
}
}  // namespace internal
}  // namespace edgeattn

#endif

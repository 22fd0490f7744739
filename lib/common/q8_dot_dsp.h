// SPDX-License-Identifier: Apache-2.0
// Exact int8 dot product with the Armv7E-M DSP extension (Cortex-M4, M7, M33, M55: __ARM_FEATURE_DSP), for Q8
// groups on cores without Helium: per 4 bytes of each operand, SXTB16 sign-extends bytes 0 and 2 (and, with its
// built-in rotation by 8, bytes 1 and 3) into the two 16-bit halves of a word, and SMLAD multiplies both halves
// and adds both products to a 32-bit accumulator. 4 multiply-adds take 2 word loads, 4 SXTB16 and 2 SMLAD (8
// instructions) where the plain loop takes 8 byte loads and 4 MLA (12). Exact for |sum| < 2^31; the last n mod 4
// elements are multiplied one by one, so nothing past a[n - 1] or b[n - 1] is read.
#ifndef EDGEATTN_LIB_COMMON_Q8_DOT_DSP_H_
#define EDGEATTN_LIB_COMMON_Q8_DOT_DSP_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define EDGEATTN_DSP 1
#include <arm_acle.h>
#else
#define EDGEATTN_DSP 0
#endif

#if EDGEATTN_DSP
namespace edgeattn {
namespace dsp {

// Four bytes as a word, from any alignment (Cortex-M3 and later load unaligned words; memcpy says so portably).
inline int8x4_t LoadWord(const int8_t* p) {
  int8x4_t w;
  memcpy(&w, p, sizeof w);
  return w;
}

// Bytes 1 and 3 of w sign-extended into the two halves: SXTB16 with its built-in rotation by 8. GCC 12 does not
// fold a rotation into SXTB16 (it has no __ror, and emits a separate ROR for (w >> 8) | (w << 24)), so it gets the
// instruction spelled out; clang folds the rotation itself.
inline int16x2_t SignExtendOddBytes(int8x4_t w) {
#if defined(__GNUC__) && !defined(__clang__)
  int16x2_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
  return r;
#else
  const uint32_t u = static_cast<uint32_t>(w);
  return __sxtb16(static_cast<int8x4_t>((u >> 8) | (u << 24)));
#endif
}

// 4 bytes of a times 4 of b into acc: even bytes with one SMLAD, odd bytes with the other.
inline int32_t MultiplyAdd4(int8x4_t wa, int8x4_t wb, int32_t acc) {
  acc = __smlad(__sxtb16(wa), __sxtb16(wb), acc);
  return __smlad(SignExtendOddBytes(wa), SignExtendOddBytes(wb), acc);
}

// sum a[i] * b[i] exactly; 8 bytes per iteration in two chains (SMLAD waits on its accumulator).
inline int32_t DotS8Dsp(const int8_t* a, const int8_t* b, size_t n) {
  int32_t s0 = 0, s1 = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 = MultiplyAdd4(LoadWord(a + i), LoadWord(b + i), s0);
    s1 = MultiplyAdd4(LoadWord(a + i + 4), LoadWord(b + i + 4), s1);
  }
  if (i + 4 <= n) {
    s0 = MultiplyAdd4(LoadWord(a + i), LoadWord(b + i), s0);
    i += 4;
  }
  for (; i < n; ++i) s1 += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return s0 + s1;
}

// s[0] = sum a[i] * b0[i] and s[1] = sum a[i] * b1[i] exactly: a linear_q8 group against two outputs' weights,
// a's word loaded and sign-extended once for both (per 4 bytes of each row: 3 word loads, 6 SXTB16 and 4 SMLAD, 13
// instructions where two DotS8Dsp calls take 16). Each row's sum is its own chain. Nothing past a[n - 1], b0[n - 1]
// or b1[n - 1] is read.
inline void DotS8Dsp2(const int8_t* a, const int8_t* b0, const int8_t* b1, size_t n, int32_t s[2]) {
  int32_t s0 = 0, s1 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const int8x4_t wa = LoadWord(a + i), w0 = LoadWord(b0 + i), w1 = LoadWord(b1 + i);
    const int16x2_t even = __sxtb16(wa), odd = SignExtendOddBytes(wa);
    s0 = __smlad(even, __sxtb16(w0), s0);
    s1 = __smlad(even, __sxtb16(w1), s1);
    s0 = __smlad(odd, SignExtendOddBytes(w0), s0);
    s1 = __smlad(odd, SignExtendOddBytes(w1), s1);
  }
  for (; i < n; ++i) {
    s0 += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b0[i]);
    s1 += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b1[i]);
  }
  s[0] = s0, s[1] = s1;
}

}  // namespace dsp
}  // namespace edgeattn
#endif  // EDGEATTN_DSP

#endif  // EDGEATTN_LIB_COMMON_Q8_DOT_DSP_H_

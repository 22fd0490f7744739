// SPDX-License-Identifier: Apache-2.0
// The F16 storage format, scalar part: float32 -> IEEE binary16 by integer operations only, so the stored bits
// are the same on every target (a target's own f32 -> f16 demotion may truncate, or flush subnormals); binary16 ->
// float32 exactly, by integer operations or, on Cortex-M FPUs, VCVTB. Shared by
// the KV cache and every other user of f16 storage (docs/architecture.md, storage formats).
#ifndef EDGEATTN_LIB_COMMON_F16_H_
#define EDGEATTN_LIB_COMMON_F16_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/common/arch.h"
#include "lib/common/bit_cast.h"

namespace edgeattn {
namespace internal {

// Finite floats with |x| >= 65520 round to infinity in binary16 (65504 is the largest half; 65520 the midpoint
// to the next binade); the cache rejects them instead.
constexpr uint32_t kHalfOverflowBits = 0x477FF000u;  // 65520.0f

// f32 -> binary16 bits, round to nearest, ties to even, with subnormal halves; NaN stays NaN (quiet, top payload
// bits kept), +-inf stays +-inf, values from 65520 up become infinity.
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t x = BitCastScalar<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) {
    return static_cast<uint16_t>(sign | 0x7C00u | (a > 0x7F800000u ? 0x0200u | ((a >> 13) & 0x03FFu) : 0u));
  }
  if (a >= kHalfOverflowBits) return static_cast<uint16_t>(sign | 0x7C00u);
  uint32_t mantissa, shift, q;
  if (a >= 0x38800000u) {  // >= 2^-14: a normal half. Re-bias the exponent (127 -> 15), keep 10 mantissa bits.
    mantissa = a & 0x007FFFFFu;
    shift = 13;
    q = (((a >> 23) - 112u) << 10) | (mantissa >> 13);
  } else {
    // A subnormal half counts units of 2^-24: the float's significand (with its implicit bit) shifted right by
    // 126 - exponent. Below 2^-25 (exponent < 102) everything rounds to 0, including float subnormals.
    const uint32_t e = a >> 23;
    if (e < 102) return static_cast<uint16_t>(sign);
    mantissa = (a & 0x007FFFFFu) | 0x00800000u;
    shift = 126 - e;  // 14 .. 24
    q = mantissa >> shift;
  }
  const uint32_t rest = mantissa & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  // A carry out of the mantissa moves into the exponent field, which is the correctly rounded result (also from
  // the largest subnormal to the smallest normal, and from 65504 + ... to infinity, excluded above).
  if (rest > half || (rest == half && (q & 1u) != 0)) ++q;
  return static_cast<uint16_t>(sign | q);
}

// binary16 bits -> f32, exact (every half is a float).
inline float HalfBitsToFloat(uint16_t h) {
#if EDGEATTN_HAS_M_PROFILE_FPU
  // Finite halves by the FPU's VCVTB (1 instruction where the integer steps below take 6 to 40). It is exact and
  // ignores FPSCR.FZ: flush-to-zero applies to single-precision operands, and a subnormal half is a normal float.
  // FPSCR.AHP (the alternative format, without infinities or NaNs) changes only what exponent 31 means, so those
  // halves take the integer steps, and the caller's FPSCR cannot change a result.
  if ((h & 0x7C00u) != 0x7C00u) {
    float f;
    __asm__("vmov %0, %1\n\tvcvtb.f32.f16 %0, %0" : "=t"(f) : "r"(static_cast<uint32_t>(h)));
    return f;
  }
#endif
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x03FFu;
  if (e == 0x1F) return BitCastScalar<float>(sign | 0x7F800000u | (mantissa << 13));
  if (e != 0) return BitCastScalar<float>(sign | ((e + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return BitCastScalar<float>(sign);
  // Subnormal half m * 2^-24: normalise the significand into a normal float.
  uint32_t exponent = 113;  // 2^-14 with the leading bit at position 10
  while ((mantissa & 0x0400u) == 0) {
    mantissa <<= 1;
    --exponent;
  }
  return BitCastScalar<float>(sign | (exponent << 23) | ((mantissa & 0x03FFu) << 13));
}

// Element e of a row of halves at any address, as a float.
inline float LoadHalfElement(const unsigned char* row, size_t e) {
  uint16_t h;
  memcpy(&h, row + 2 * e, sizeof(h));
  return HalfBitsToFloat(h);
}

// n floats stored as halves at dst (any address). The values must round to finite halves or be +-inf or NaN (the
// KV cache rejects finite |x| >= 65520 before it stores).
inline void StoreHalfRow(const float* x, size_t n, unsigned char* dst) {
  for (size_t e = 0; e < n; ++e) {
    const uint16_t h = FloatToHalfBits(x[e]);
    memcpy(dst + 2 * e, &h, sizeof(h));
  }
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_F16_H_

// SPDX-License-Identifier: Apache-2.0
// Reading the caller's floating-point environment without touching it.
//
// The library never writes the FP control register (MXCSR, FPCR, FPSCR): it runs in whatever rounding mode
// and flush-to-zero setting the caller has. Range reductions that round to an integer by adding a magic
// constant round in that mode; the kernels ask RoundsToNearest() once per call or row and, when it is false,
// take steps that bring the integer back to the nearest one (see lib/exp/exp_scalar.h).
#ifndef EDGEATTN_LIB_COMMON_FP_ENV_H_
#define EDGEATTN_LIB_COMMON_FP_ENV_H_

#include <stdint.h>

#include "lib/common/bit_cast.h"

namespace edgeattn {
namespace internal {

// Keeps the compiler from folding f into a constant expression (it assumes round-to-nearest when it folds).
inline float OpaqueFloat(float f) {
#if defined(__GNUC__) && (defined(__x86_64__) || (defined(__i386__) && defined(__SSE_MATH__)))
  __asm__("" : "+x"(f));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(f));
#elif defined(__GNUC__) && defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4)
  __asm__("" : "+t"(f));
#elif defined(__GNUC__)
  __asm__("" : "+r"(f));
#else
  volatile float v = f;
  f = v;
#endif
  return f;
}

// True when the FPU rounds to nearest (the default), read without touching the control register: 3/4 of an
// ulp added to 1 rounds away from 1 (low bit set) only to nearest or upward, subtracted from -1 only to nearest
// or downward. Integer operations on the two sums, no branch: the compiler hoists the whole test out of a
// loop, leaving one test-and-branch where a caller inside the loop asks. On ARMv7 the NEON unit always rounds
// to nearest whatever the FPSCR says; this reads the VFP's mode, so NEON code may take the (correct, slower)
// directed-mode steps needlessly there.
inline bool RoundsToNearest() {
  const float three_quarter_ulp = OpaqueFloat(0x1.8p-24f);
  const uint32_t up = BitCastScalar<uint32_t>(1.0f + three_quarter_ulp);
  const uint32_t down = BitCastScalar<uint32_t>(-1.0f - three_quarter_ulp);
  return (up & down & 1u) != 0;
}

// Whether double arithmetic follows the FPU's rounding mode. Not on 32-bit Arm without a double-precision FPU
// (Cortex-M4, single-precision M7 and M55 builds): libgcc's software doubles always round to nearest, so their
// directed-mode variants would be dead code in the firmware.
#if defined(__arm__) && !(defined(__ARM_FP) && (__ARM_FP & 8))
inline bool DoublesRoundToNearest() { return true; }
#else
inline bool DoublesRoundToNearest() { return RoundsToNearest(); }
#endif

// The same answer from an out-of-line function declared const (its result depends on nothing the compiler can
// see change): for callers inside loops they do not own (attention's scalar exp calls), the compiler hoists the
// call out of the loop, leaving one predicted branch. Defined in lib/exp/exp.cc.
#if defined(__GNUC__)
bool RoundsToNearestOutOfLine() noexcept __attribute__((const));
inline bool RoundsToNearestInvariant() { return RoundsToNearestOutOfLine(); }
#else
inline bool RoundsToNearestInvariant() { return RoundsToNearest(); }
#endif

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_FP_ENV_H_

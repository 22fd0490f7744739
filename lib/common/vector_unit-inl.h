// SPDX-License-Identifier: Apache-2.0
// Facts about the vector unit a target's code runs on, each derived once here (docs/architecture.md), for the
// kernels to test by name instead of repeating the architecture and target macros.

#if defined(EDGEATTN_LIB_COMMON_VECTOR_UNIT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_VECTOR_UNIT_INL_H_
#undef EDGEATTN_LIB_COMMON_VECTOR_UNIT_INL_H_
#else
#define EDGEATTN_LIB_COMMON_VECTOR_UNIT_INL_H_
#endif

#include "hwy/highway.h"

// No HWY_BEFORE_NAMESPACE: the region would hold no function, and clang warns of an unused target attribute
// (-Wpragma-clang-attribute, an error in -Werror builds with -march=native).
namespace edgeattn {
namespace HWY_NAMESPACE {

// Whether this target's float vector instructions flush subnormal operands and results to zero whatever the
// floating-point control register says. ARMv7's Advanced SIMD always does (its float operations run in the
// "standard FPSCR value" mode, flush-to-zero on); so do Helium's (MVE) float instructions, which a backend for
// them declares in its own namespace. The scalar FPU (VFP; SCALAR and EMU128 code) keeps gradual underflow.
// Code whose contract promises subnormal results (the Q8 product q * scale of a subnormal scale) takes an
// element-wise step where this is true.
constexpr bool kVectorFlushesSubnormals = HWY_ARCH_ARM_V7 && HWY_TARGET == HWY_NEON;

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn

#endif  // include guard toggle

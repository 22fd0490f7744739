// SPDX-License-Identifier: Apache-2.0
// What the compiler targets, derived once from its macros (CMSIS-DSP's arm_math_types.h does the same for
// ARM_MATH_MVEF): every file and CMake's probe test these names, never the compiler's macros again.
#ifndef EDGEATTN_LIB_COMMON_ARCH_H_
#define EDGEATTN_LIB_COMMON_ARCH_H_

// Helium (M-profile Vector Extension) with floating point: Cortex-M55 and M85 built with MVE float
// (-mcpu=cortex-m55, or +mve.fp). Bit 1 of __ARM_FEATURE_MVE is the float half; integer-only MVE (bit 0 alone)
// leaves it 0. CMakeLists.txt's probe includes this header, so the build's options follow the same answer.
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define EDGEATTN_HAS_MVE_FLOAT 1
#else
#define EDGEATTN_HAS_MVE_FLOAT 0
#endif

// Helium's integer half (bit 0: every Armv8.1-M core with MVE, float or not): the int8 dot kernels.
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define EDGEATTN_HAS_MVE_INT 1
#else
#define EDGEATTN_HAS_MVE_INT 0
#endif

#endif  // EDGEATTN_LIB_COMMON_ARCH_H_

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

// An M-profile core with a single-precision FPU (Cortex-M4's FPv4-SP, M7's and M33's FPv5, M55): VCVTB converts
// a half to a float in one instruction. GCC's __ARM_FP leaves its half-precision bit clear for FPv4-SP, whose
// instruction set has the conversions all the same, so the test is the profile and the single-precision bit.
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP) && (__ARM_FP & 4)
#define EDGEATTN_HAS_M_PROFILE_FPU 1
#else
#define EDGEATTN_HAS_M_PROFILE_FPU 0
#endif

#endif  // EDGEATTN_LIB_COMMON_ARCH_H_

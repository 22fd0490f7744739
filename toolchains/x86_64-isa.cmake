# SPDX-License-Identifier: Apache-2.0
# x86-64 ISA level for the host toolchain files (x86_64-linux-gcc.cmake, x86_64-linux-clang14.cmake):
#   EDGEATTN_X86_ISA=""        the compiler's default (baseline x86-64 on Debian)
#   EDGEATTN_X86_ISA=baseline  -march=x86-64           static dispatch gets Highway's SCALAR (gcc) / EMU128 (clang)
#   EDGEATTN_X86_ISA=v3        -march=x86-64-v3        static dispatch gets AVX2
#   EDGEATTN_X86_ISA=v4        -march=x86-64-v4        static dispatch gets AVX3 (AVX-512)
# Highway's AVX2 and AVX3 targets also require AES and CLMUL, which the x86-64-v3/v4 levels do not include, so
# those levels add -maes -mpclmul. With run-time dispatch the level is the minimum the binary needs: targets
# below it are not compiled.
set(EDGEATTN_X86_ISA "" CACHE STRING "x86-64 ISA level: empty (compiler default), baseline, v3 or v4")
set_property(CACHE EDGEATTN_X86_ISA PROPERTY STRINGS "" baseline v3 v4)
if(EDGEATTN_X86_ISA STREQUAL "baseline")
  set(EDGEATTN_X86_FLAGS "-march=x86-64")
elseif(EDGEATTN_X86_ISA STREQUAL "v3")
  set(EDGEATTN_X86_FLAGS "-march=x86-64-v3 -maes -mpclmul")
elseif(EDGEATTN_X86_ISA STREQUAL "v4")
  set(EDGEATTN_X86_FLAGS "-march=x86-64-v4 -maes -mpclmul")
elseif(NOT EDGEATTN_X86_ISA STREQUAL "")
  message(FATAL_ERROR "EDGEATTN_X86_ISA must be empty, baseline, v3 or v4, not '${EDGEATTN_X86_ISA}'")
endif()
set(CMAKE_C_FLAGS_INIT "${EDGEATTN_X86_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${EDGEATTN_X86_FLAGS}")

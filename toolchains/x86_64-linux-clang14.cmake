# SPDX-License-Identifier: Apache-2.0
# Host x86-64 Linux with Debian's clang-14 (package clang-14); EDGEATTN_X86_ISA selects the ISA level
# (x86_64-isa.cmake). With clang, Highway's fallback target is EMU128 instead of SCALAR, so the test suite also
# covers that target.
set(CMAKE_C_COMPILER clang-14)
set(CMAKE_CXX_COMPILER clang++-14)
include(${CMAKE_CURRENT_LIST_DIR}/x86_64-isa.cmake)

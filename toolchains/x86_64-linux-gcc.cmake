# SPDX-License-Identifier: Apache-2.0
# Host x86-64 Linux with Debian's GCC; EDGEATTN_X86_ISA selects the ISA level (x86_64-isa.cmake).
set(CMAKE_C_COMPILER gcc)
set(CMAKE_CXX_COMPILER g++)
include(${CMAKE_CURRENT_LIST_DIR}/x86_64-isa.cmake)

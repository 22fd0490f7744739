# SPDX-License-Identifier: Apache-2.0
# Bare-metal Cortex-M with Debian's arm-none-eabi GCC and newlib (gcc-arm-none-eabi, libnewlib-arm-none-eabi,
# libstdc++-arm-none-eabi-newlib). EDGEATTN_MCU picks the core, its FPU and the QEMU board that runs the tests
# (qemu-system-arm, with semihosting for output, arguments and the exit code):
#   cortex-m4   FPv4-SP (single precision)   mps2-an386
#   cortex-m7   FPv5 (double precision)      mps2-an500
#   cortex-m55  FPv5 + MVE (Helium)          mps3-an547
# Highway has no Helium target: the SIMD path is Highway's SCALAR target (static dispatch), the scalar path plain C++.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # nothing links without the board's start-up code

set(EDGEATTN_MCU "cortex-m4" CACHE STRING "Cortex-M core: cortex-m4, cortex-m7 or cortex-m55")
set_property(CACHE EDGEATTN_MCU PROPERTY STRINGS cortex-m4 cortex-m7 cortex-m55)
if(EDGEATTN_MCU STREQUAL "cortex-m4")
  set(EDGEATTN_MCU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
  set(EDGEATTN_BOARD "mps2-an386")
elseif(EDGEATTN_MCU STREQUAL "cortex-m7")
  set(EDGEATTN_MCU_FLAGS "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16 -mfp16-format=ieee")
  set(EDGEATTN_BOARD "mps2-an500")
elseif(EDGEATTN_MCU STREQUAL "cortex-m55")
  set(EDGEATTN_MCU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
  set(EDGEATTN_BOARD "mps3-an547")
else()
  message(FATAL_ERROR "EDGEATTN_MCU must be cortex-m4, cortex-m7 or cortex-m55, not '${EDGEATTN_MCU}'")
endif()

set(CMAKE_C_FLAGS_INIT "${EDGEATTN_MCU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${EDGEATTN_MCU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/../platforms/cortex-m/run-qemu.sh;${EDGEATTN_BOARD};${EDGEATTN_MCU}")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

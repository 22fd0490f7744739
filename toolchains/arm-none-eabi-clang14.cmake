# SPDX-License-Identifier: Apache-2.0
# Bare-metal Cortex-M55 compiled by clang-14 instead of GCC 12.2, for the same QEMU board (mps3-an547).
# clang compiles; Debian's arm-none-eabi GCC driver links, against its newlib, libstdc++ and libgcc (clang-14
# brings no bare-metal C or C++ runtime). Board, runner and find modes are arm-none-eabi.cmake's.
# Why a second compiler for one core: clang-14 makes tail-predicated Helium loops (DLSTP/LETP) where GCC 12.2
# makes none, so both are built and tested.
# Trap: clang silently drops MVE float when -mfpu is given with -mcpu=cortex-m55, so no -mfpu here; the build
# checks __ARM_FEATURE_MVE & 2 instead of trusting the flags (EDGEATTN_HAS_MVE_FLOAT in CMakeLists.txt).
set(EDGEATTN_MCU "cortex-m55" CACHE STRING "Cortex-M core (the clang toolchain supports cortex-m55)")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
if(NOT EDGEATTN_MCU STREQUAL "cortex-m55")
  message(FATAL_ERROR "arm-none-eabi-clang14.cmake is for cortex-m55 (its board and flags are tested), "
                      "not '${EDGEATTN_MCU}'")
endif()

set(CMAKE_C_COMPILER clang-14)
set(CMAKE_CXX_COMPILER clang++-14)
set(CMAKE_C_COMPILER_TARGET arm-none-eabi)
set(CMAKE_CXX_COMPILER_TARGET arm-none-eabi)
set(CMAKE_SYSROOT /usr/lib/arm-none-eabi)  # newlib's headers (clang adds <sysroot>/include)
foreach(tool IN ITEMS ar ranlib nm objdump objcopy size)
  string(TOUPPER ${tool} upper)
  set(CMAKE_${upper} arm-none-eabi-${tool})
endforeach()

# libstdc++'s target headers (bits/c++config.h) live in the GCC multilib directory for these flags, which clang's
# bare-metal driver does not know about.
separate_arguments(edgeattn_mcu_flag_list UNIX_COMMAND "${EDGEATTN_MCU_FLAGS}")
execute_process(COMMAND arm-none-eabi-gcc ${edgeattn_mcu_flag_list} -print-multi-directory
                OUTPUT_VARIABLE edgeattn_multilib OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND arm-none-eabi-gcc -dumpversion OUTPUT_VARIABLE edgeattn_gcc_version
                OUTPUT_STRIP_TRAILING_WHITESPACE)
set(edgeattn_cxx_target_headers
    ${CMAKE_SYSROOT}/include/c++/${edgeattn_gcc_version}/arm-none-eabi/${edgeattn_multilib})
if(NOT EXISTS ${edgeattn_cxx_target_headers}/bits/c++config.h)
  message(FATAL_ERROR "no libstdc++ target headers in ${edgeattn_cxx_target_headers} "
                      "(install libstdc++-arm-none-eabi-newlib)")
endif()

# -fshort-enums: the AAPCS variant GCC's arm-none-eabi objects (newlib, libstdc++) are built with.
set(CMAKE_C_FLAGS_INIT "${CMAKE_C_FLAGS_INIT} -fshort-enums")
set(CMAKE_CXX_FLAGS_INIT "${CMAKE_CXX_FLAGS_INIT} -fshort-enums -isystem ${edgeattn_cxx_target_headers}")

# clang marks its objects' stacks non-executable (.note.GNU-stack) and newlib's objects carry no such note, which
# makes ld warn once per newlib object; on a Cortex-M without an MPU policy there is nothing to mark either way.
set(CMAKE_EXE_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT} -Wl,-z,noexecstack")

# The GCC driver links: it knows where newlib, libstdc++ and libgcc of this multilib are.
foreach(lang IN ITEMS C CXX)
  set(CMAKE_${lang}_LINK_EXECUTABLE
      "arm-none-eabi-g++ ${EDGEATTN_MCU_FLAGS} <CMAKE_${lang}_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
endforeach()
